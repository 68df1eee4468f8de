"""``proto = ...`` in ``compatfuzz.toml``: a protobuf API for ``compatfuzz fuzz`` and pytest.

::

    [[api]]
    name = "cluster"
    proto = "protos"                      # .proto file(s) or folder, descriptor set, module:x_pb2
    proto_path = ["vendor"]               # optional import folders (the CLI's -I/--proto-path)
    messages = { v2 = "example.cluster.v2.Cluster", v3 = "example.cluster.v3.Cluster" }
    converters = { "v2->v3" = "conversion:v2_to_v3", "v3->v2" = "conversion:v3_to_v2" }
    # or convert = "conversion:convert", or to_hub/from_hub with hub = "v3"
    # encodings = ["binary", "json", "json-names", "yaml"]

``roundtrip``'s config loader finds :func:`load_api` through the ``compatfuzz.apis`` entry
point named ``proto`` (it never imports this part, which needs the ``protobuf`` extra) and
hands it the table; paths, functions and mistakes are resolved and reported with its
:class:`~compatfuzz.roundtrip.ConfigEntry`, so they read as a CRD API's do.
"""

from __future__ import annotations

import difflib
from typing import Any

from compatfuzz.protobuf._api import ProtoAPI
from compatfuzz.protobuf._load import ProtoSchema, load_protos
from compatfuzz.protobuf._roundtrip import ENCODINGS
from compatfuzz.roundtrip import ConfigEntry

__all__ = ["KEYS", "load_api"]

KEYS = frozenset({"name", "proto", "proto_path", "messages", "hub", "convert", "to_hub",
                  "from_hub", "converters", "encodings"})
_EXAMPLE = 'messages = { v2 = "example.cluster.v2.Cluster", v3 = "example.cluster.v3.Cluster" }'


def _strings(entry: ConfigEntry, key: str, example: str = '"protos"') -> list[tuple[str, str]]:
    """A string or a list of strings at ``key`` (none when absent), each with the key that
    names it in errors (``proto`` or ``proto/1``)."""
    value = entry.table.get(key, [])
    if isinstance(value, str) and value:
        return [(key, value)]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise entry.error(f"{key} must be a string or a list of strings, got {value!r}",
                          key=key, hint=f"write {key} = {example} or a list of them"
                          + (" (paths are relative to this file)" if "proto" in key else ""))
    return [(f"{key}/{i}", v) for i, v in enumerate(value)]


def _schema(entry: ConfigEntry) -> ProtoSchema:
    sources = _strings(entry, "proto")
    if not sources:
        raise entry.error("proto is empty", key="proto",
                          hint='write proto = "protos" (a folder of .proto files, relative '
                               "to this file)")
    include = []
    for key, folder in _strings(entry, "proto_path"):
        found = entry.path(key, folder, what="import folder")
        if not found.is_dir():
            raise entry.error(f"import folder {folder!r} is a file", key=key,
                              hint="proto_path lists folders that hold imported .proto files")
        include.append(found)
    loaded: list[Any] = [entry.import_module(key, spec.removeprefix("module:"))
                         if spec.startswith("module:") else entry.path(key, spec)
                         for key, spec in sources]
    return load_protos(loaded[0] if len(loaded) == 1 else loaded, include=include,
                       label=" ".join(spec for _, spec in sources))


def _messages(entry: ConfigEntry, schema: ProtoSchema) -> dict[str, str]:
    if "messages" not in entry.table:
        raise entry.error("missing messages: the message of each version",
                          hint=f"add {_EXAMPLE}")
    table = entry.mapping("messages")
    if not table:
        raise entry.error("messages is empty", key="messages", hint=f"write {_EXAMPLE}")
    known = schema.message_names()
    out = {}
    for version, full in table.items():
        key = f"messages/{version}"
        if not isinstance(full, str) or not full:
            raise entry.error(f"expected a message name, got {full!r}", key=key,
                              hint=f"write {_EXAMPLE}")
        name = full.lstrip(".")
        if name not in known:
            close = difflib.get_close_matches(name, known, n=2, cutoff=0.5)
            roots = schema.message_names(roots_only=True)
            raise entry.error(
                f"{schema.label} defines no message {name!r}", key=key,
                hint=(f"did you mean {' or '.join(map(repr, close))}? " if close else
                      f"it defines: {', '.join(roots[:8])}"
                      + (f" (+{len(roots) - 8} more)" if len(roots) > 8 else "") + "; ")
                + "give the full name, package.Message")
        out[str(version)] = name
    return out


def load_api(entry: ConfigEntry) -> ProtoAPI:
    """The :class:`ProtoAPI` an ``[[api]]`` table with ``proto =`` declares.

    Raises:
        SchemaLoadError: an unknown key, a missing file, a ``.proto`` that does not
            compile, a message the files do not define, a converter that cannot be
            imported (naming the file, the key and a fix).
    """
    if "overrides" in entry.table:
        raise entry.error(
            "a protobuf API's messages are drawn from their descriptors and validate "
            "rules, not from a schema's field paths: [api.overrides] does not apply here",
            key="overrides",
            hint="steer values with the message's validate rules ((validate.rules) in the "
                 ".proto), or draw your own with compatfuzz.protobuf.from_message in Python")
    entry.check_keys(KEYS)
    name = entry.name()
    schema = _schema(entry)
    messages = _messages(entry, schema)
    options = entry.converter_options()
    if "encodings" in entry.table:
        encodings = _strings(entry, "encodings", '["binary", "json"]')
        for key, encoding in encodings:
            if encoding not in ENCODINGS:
                close = difflib.get_close_matches(encoding, ENCODINGS, n=1)
                raise entry.error(
                    f"unknown encoding {encoding!r}", key=key,
                    hint=(f"did you mean {close[0]!r}? " if close else "")
                    + f"the encodings are: {', '.join(ENCODINGS)}")
        options["encodings"] = [encoding for _, encoding in encodings]
    return ProtoAPI(name, schema, messages, **options)
