"""What a finding breaks for the clients of a web API, in their words.

:mod:`compatfuzz.compat._impact` judges a finding by what it does to objects stored in a
Kubernetes cluster (validation ratcheting, pruning, updates of a stored object). A web
API built on pydantic (FastAPI, Cadwyn) stores nothing on its clients' behalf: a request
is validated whole, every time, and refused with 422 when it does not fit (FastAPI's
``RequestValidationError`` handler); a response is read by a client that may refuse what
it does not know. So the same :class:`~compatfuzz.compat.Impact` levels read here as:

* ``any-update`` -> ``requests``: old clients' requests that were valid are refused;
* ``reads`` -> ``responses``: old clients may reject what they read;
* ``none`` -> ``none``: no old client notices.

(``create`` and ``update-field`` need ratcheting, which a web API does not have.) The
levels stay the ``Impact`` values, so ``--fail-on-impact`` and JSON reports keep one
vocabulary; only the words change. A schema is a web API's when its loader says so in
``Schema.meta["api"]`` (:data:`REST`), as the pydantic and Cadwyn inputs of ``diff`` do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compatfuzz.compat._model import Finding, Impact, Side

__all__ = ["API_KEY", "REST", "is_rest", "judge", "label"]

#: the ``Schema.meta`` key that names the kind of API a schema belongs to
API_KEY = "api"
#: its value for a web API (requests and responses over HTTP)
REST = "rest"

_LABELS = {Impact.NONE: "none", Impact.READS: "responses", Impact.ANY_UPDATE: "requests"}
_DEFAULTS = frozenset({"default-added", "default-removed", "default-changed",
                       "default-missing-in-version"})
_REFUSED = "old clients' requests that were valid are refused (422)"
_READ = "old clients may reject what they read"


def is_rest(schema: Any) -> bool:
    """Whether ``schema`` (a :class:`~compatfuzz.schema.Schema` or ``None``) belongs to a
    web API (module docstring)."""
    meta = getattr(schema, "meta", None)
    return isinstance(meta, Mapping) and meta.get(API_KEY) == REST


def label(impact: Impact) -> str:
    """The word a web API's report shows for ``impact`` (module docstring)."""
    return _LABELS.get(impact, str(impact))


def judge(f: Finding) -> tuple[Impact, str]:
    """The impact of ``f`` on a web API's old clients and a one-line note saying why."""
    if f.rule == "route-removed":
        return Impact.ANY_UPDATE, "old clients' calls to it are answered 404 or 405"
    if f.rule == "route-status-changed":
        return Impact.READS, "old clients that check the status code see another one"
    if f.rule in _DEFAULTS:
        return Impact.READS, ("no request is refused; a field a client leaves out takes "
                              "another default, and responses show it")
    if Side.REQUEST in f.breaks:
        if f.rule in ("unhandled", "witness-only"):
            return Impact.ANY_UPDATE, ("assumed the worst: no rule says which requests "
                                       "are refused")
        also = "; old clients may also reject responses" if Side.RESPONSE in f.breaks else ""
        return Impact.ANY_UPDATE, _REFUSED + also
    if Side.RESPONSE in f.breaks:
        return Impact.READS, _READ
    return Impact.NONE, "no old client notices"
