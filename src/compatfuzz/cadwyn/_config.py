"""``cadwyn = ...`` in ``compatfuzz.toml``: a Cadwyn version bundle for ``compatfuzz fuzz``.

::

    [[api]]
    name = "shop"
    cadwyn = "shop.versions:version_bundle"    # a VersionBundle, or the Cadwyn app
    schemas = ["shop.schemas:CustomerResource"]  # optional: HEAD schemas the bundle's
                                                 # instructions do not name

    reset = "shop.app:reset_storage"  # optional, with the app: empties its storage before
                                      # each example of a route property

    [[api.accept]]                  # optional: a difference a version shows on purpose
    property = "roundtrip"
    versions = "2023-01-01->head"
    path = "phone"
    why = "2023-01-01 clients never had phones"

``roundtrip``'s config loader finds :func:`load_api` through the ``compatfuzz.apis`` entry
point named ``cadwyn`` (it never imports this part, which needs the ``cadwyn`` extra).
"""

from __future__ import annotations

from compatfuzz.cadwyn._bundle import HEAD, CadwynAPI
from compatfuzz.cadwyn._suite import CadwynSuite
from compatfuzz.errors import InvalidArgument
from compatfuzz.roundtrip import ConfigEntry

__all__ = ["KEYS", "load_api"]

KEYS = frozenset({"name", "cadwyn", "schemas", "accept", "overrides", "reset"})


def load_api(entry: ConfigEntry) -> CadwynSuite:
    """The :class:`CadwynSuite` an ``[[api]]`` table with ``cadwyn =`` declares.

    Raises:
        SchemaLoadError: an unknown key, a module that cannot be imported, an attribute
            that is not a bundle or app (naming the file, the key and a fix).
    """
    entry.check_keys(KEYS)
    name = entry.name()
    source = entry.function("cadwyn", entry.table["cadwyn"])
    extra = entry.table.get("schemas", [])
    if not isinstance(extra, list):
        raise entry.error(f"schemas must be a list, got {extra!r}", key="schemas",
                          hint='write schemas = ["shop.schemas:CustomerResource"]')
    schemas = [entry.function(f"schemas/{i}", spec) for i, spec in enumerate(extra)]
    try:
        api = CadwynAPI(source, schemas=schemas)
    except InvalidArgument as exc:
        raise entry.error(str(exc), key="cadwyn",
                          hint='point at the VersionBundle or the Cadwyn app, e.g. '
                               'cadwyn = "shop.versions:version_bundle"') from None
    if not api.schemas:
        raise entry.error("the bundle names no schema in its instructions or migrations",
                          key="cadwyn", hint='list the HEAD schemas to check: schemas = '
                                             '["shop.schemas:Customer"]')
    from compatfuzz.roundtrip._check._config_overrides import overrides_option

    reset = None
    if "reset" in entry.table:
        if api.app is None:
            raise entry.error("reset empties the app's storage between route examples, "
                              "but cadwyn = names a VersionBundle, not the app",
                              key="reset", hint='point cadwyn at the app, e.g. cadwyn = '
                                                '"shop.app:app", or remove reset')
        reset = entry.function("reset", entry.table["reset"])
        if not callable(reset):
            raise entry.error(f"reset must name a function, got {reset!r}", key="reset",
                              hint='write reset = "shop.app:reset_storage"')
    return CadwynSuite(name, api, source=entry.source,
                       accept=entry.accept_entries([[*api.versions, HEAD]]),
                       overrides=overrides_option(entry), reset=reset)
