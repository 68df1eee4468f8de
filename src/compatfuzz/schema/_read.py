"""Read JSON and YAML files into plain Python data, with errors that point at the line.

YAML is read as Kubernetes reads it, with a *safe* loader (the C one
when PyYAML has it) whose implicit resolvers are go-yaml v2's, not PyYAML's YAML 1.1 ones:
kubectl and kube-apiserver turn YAML into JSON with ``sigs.k8s.io/yaml`` ``YAMLToJSON``
(``yaml.go``; v1.6.0 in Kubernetes 1.37) over ``go.yaml.in/yaml/v2`` (``resolve.go``,
``decode.go``; v2.4.4). So a plain ``=`` is the string (PyYAML's ``!!value`` tag refused
it: ``diff`` exited 2 on prometheus-operator's CRDs), ``2024-01-01`` stays a string,
``y``/``yes``/``on`` are true, and keys become JSON strings (``on:`` is ``"true"``); see
:class:`_Loader` and :func:`_node_json_key`. ``conformance/test_yaml_conformance.py`` checks it
against the compiled upstream code.

Hostile input is bounded while loading: YAML aliases may add at most
:data:`MAX_ALIAS_EXPANSION` values once expanded (a "billion laughs" file in an ``enum``
took minutes and gigabytes before a bare ``MemoryError``), and no document may nest deeper
than :data:`MAX_DEPTH` (1,000 levels was a ``RecursionError`` traceback). Both are checked
on the YAML node graph before anything is built, iteratively, and refused with the file,
the JSON path and a fix. Real schemas are far inside both bounds (Kubernetes CRDs nest
~30 levels).

Only regular files are read (``/dev/zero`` ran to a ``MemoryError`` at
3.8 GB, a FIFO hung), at most :data:`MAX_FILE_BYTES` of them; numbers JSON cannot carry
(``NaN``, ``Infinity``, ``1e400``, integers past float64's range) and duplicate keys are
refused with the path and line, as Kubernetes' own YAML-to-JSON conversion refuses them
(``sigs.k8s.io/yaml`` ``YAMLToJSONStrict``: 'key "a" already set in map'; Go's
``encoding/json`` cannot hold a number outside float64).
"""

from __future__ import annotations

import decimal
import json
import math
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, ClassVar

import yaml

from compatfuzz.errors import SchemaLoadError

__all__ = ["MAX_ALIAS_EXPANSION", "MAX_DEPTH", "MAX_FILE_BYTES", "KubernetesYAMLLoader",
           "check_depth",
           "max_file_bytes", "parse_documents", "read_documents", "read_documents_cached",
           "read_text"]

#: Values YAML aliases may add once expanded (an alias-free file adds none).
MAX_ALIAS_EXPANSION = 1_000_000
#: Deepest nesting of mappings and lists a document may have.
MAX_DEPTH = 200
#: Largest input file read (schema, config, replay or ignore file): 64 MiB, sixteen times
#: Kubernetes' whole OpenAPI v2 document (~4 MB), far below what parsing it would cost.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Decimal digits of the largest integer a float64 holds (~1.8e308): longer is refused.
_MAX_INT_DIGITS = 309

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"


class _NotJson:
    """A number read from a file that JSON cannot carry; found and reported after parsing."""

    __slots__ = ("line", "text")

    def __init__(self, text: str, line: int | None = None) -> None:
        self.text, self.line = text, line


def _json_int(text: str) -> int | _NotJson:
    digits = len(text.lstrip("+-"))
    return int(text) if digits <= _MAX_INT_DIGITS else _NotJson(text)


def _json_float(text: str) -> float | _NotJson:
    value = float(text)
    return value if math.isfinite(value) else _NotJson(text)


# The plain scalars go-yaml v2 resolves (go.yaml.in/yaml/v2 v2.4.4 resolve.go, under
# sigs.k8s.io/yaml v1.6.0, which Kubernetes 1.37 pins): its ``resolveMap`` words, then for a
# value starting with a digit or sign strconv.ParseInt(base 0)/ParseUint on the value with
# every "_" removed, then its ``yamlStyleFloat``; a value starting with "." goes to
# strconv.ParseFloat as written. Anything else (``=``, ``1:20``, ``0x1p3``, ``yES``) is a
# string. The regexes below select the candidates; _go_scalar decides as Go does.
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_TRUE = frozenset(["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"])
_FALSE = frozenset(["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"])
_SPECIAL = {**{w: math.nan for w in (".nan", ".NaN", ".NAN")},
            **{f"{s}.{w}": (-math.inf if s == "-" else math.inf)
               for s in ("", "+", "-") for w in ("inf", "Inf", "INF")}}
_D = r"[0-9]_*"  # a digit and the underscores go-yaml strips after it
_GO_DIGITS = (rf"(?:{_D})+(?:\._*(?:{_D})*)?(?:[eE]_*(?:[-+]_*)?(?:{_D})+)?")
#: Starts with a digit or sign: Go's ParseInt base 0 or yamlStyleFloat, once "_" is gone.
_GO_NUMBER = re.compile(
    rf"^(?:[-+]_*)?(?:0_*[bBoOxX]_*(?:[0-9a-fA-F]_*)+|{_GO_DIGITS})$"
    rf"|^[-+]_*\._*(?:{_D})+(?:[eE]_*(?:[-+]_*)?(?:{_D})+)?$")
#: Starts with ".": strconv.ParseFloat as written ("_" only between digits).
_GO_POINT = re.compile(r"^\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?$")
_GO_INT = re.compile(r"^[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_YAML_STYLE_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INT64 = 1 << 63
_UINT64 = 1 << 64


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), else ParseUint (no sign): None when neither."""
    if not _GO_INT.match(plain):
        return None
    digits = plain.lstrip("+-")
    prefix = digits[:2].lower()
    if len(digits.lstrip("0")) > 66:  # past 64 bits in every base (and int()'s limit)
        return None
    if prefix in ("0b", "0o", "0x"):
        value = int(digits[2:], {"0b": 2, "0o": 8, "0x": 16}[prefix])
    else:
        value = int(digits, 8 if digits[0] == "0" else 10)  # Go: a leading 0 is octal
    value = -value if plain[0] == "-" else value
    if -_INT64 <= value < _INT64 or (plain[0] not in "+-" and value < _UINT64):
        return value
    return None


def _go_scalar(text: str) -> Any:
    """The value go-yaml v2 gives a plain scalar that starts with a digit, a sign or a
    dot: an int (int64 or uint64 range), a float, or the string itself when Go's parsers
    refuse it (``0o8``, ``1e400``: ParseFloat's range error makes a string, not +Inf)."""
    if text in _SPECIAL:
        return _SPECIAL[text]
    plain = text.replace("_", "")
    if text[0] == ".":
        if not _GO_POINT.match(text):
            return text
    else:
        value = _go_int(plain)
        if value is not None:
            return value
        if not _YAML_STYLE_FLOAT.match(plain):
            return text
    number = float(plain)
    return number if math.isfinite(number) else text


class _Loader(_Base):  # type: ignore[misc]
    """Safe loader that reads plain scalars as Kubernetes does: go-yaml v2's resolver
    (``go.yaml.in/yaml/v2`` ``resolve.go``) through ``sigs.k8s.io/yaml`` ``YAMLToJSON``.

    Why not YAML 1.2's core schema nor PyYAML's 1.1 one: kubectl and kube-apiserver read
    every manifest with go-yaml v2, which is neither. Like 1.2, ``=`` (PyYAML's 1.1
    ``!!value``, refused before) and sexagesimal ``1:20`` are strings, timestamps stay
    strings (``2024-01-01``), ``0o17`` is 15 and ``.inf``/``.nan`` are floats; like 1.1,
    ``y``/``n``/``yes``/``no``/``on``/``off`` (three spellings each) are booleans, ``017``
    is octal 15, ``0b101`` is 5 and ``_`` separates digits (``1_000``). Past Go's ranges,
    ``1e400`` and a 400-digit integer are *strings* (ParseFloat's range error), an integer
    past uint64 a float; an integral float is the integer json.Marshal writes
    (:func:`_json_value`), a key the string YAMLToJSON writes (:func:`_node_json_key`).
    """

    yaml_implicit_resolvers: ClassVar[dict[Any, list[Any]]] = {
        first: [r for r in resolvers if r[0] == _MERGE]
        for first, resolvers in _Base.yaml_implicit_resolvers.items()
        if any(r[0] == _MERGE for r in resolvers)
    }

    def _bool(self, node: Any) -> bool:
        return node.value in _TRUE

    def _number(self, node: Any) -> Any:
        text = node.value
        if not text or text[0] not in "+-.0123456789":  # !!int/!!float on other text
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {text!r} as a number ({node.tag})", node.start_mark)
        value = _go_scalar(text)
        if isinstance(value, float) and not math.isfinite(value):
            return _NotJson(text, node.start_mark.line + 1)
        return _json_value(value)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
        """Keys as YAMLToJSON writes them (see :func:`_node_json_key`; checked before)."""
        self.flatten_mapping(node)
        return {str(_node_json_key(k)): self.construct_object(v, deep=deep)
                for k, v in node.value}

    def _binary(self, node: Any) -> str:
        return _json_value(self.construct_yaml_binary(node))  # type: ignore[no-any-return]

    def _timestamp(self, node: Any) -> str:
        return str(node.value)  # go-yaml v2 decode.go: "we set it as a string"

    def _merge_value(self, node: Any) -> str:
        return str(node.value)  # a plain "<<" that is not a key is the string "<<"


_Loader.add_implicit_resolver(_BOOL, re.compile(
    "^(?:" + "|".join(sorted(_TRUE | _FALSE)) + ")$"), list("yYnNtTfFoO"))
_Loader.add_implicit_resolver(_NULL, re.compile(r"^(?:~|null|Null|NULL|)$"),
                              ["~", "n", "N", ""])
_Loader.add_implicit_resolver(_FLOAT, re.compile(
    "^(?:" + "|".join(re.escape(w) for w in _SPECIAL) + ")$"), list("+-."))
_Loader.add_implicit_resolver(_FLOAT, _GO_POINT, ["."])
_Loader.add_implicit_resolver(_INT, _GO_NUMBER, list("+-0123456789"))
_Loader.add_constructor(_BOOL, _Loader._bool)
_Loader.add_constructor(_INT, _Loader._number)
_Loader.add_constructor(_FLOAT, _Loader._number)
_Loader.add_constructor(_TIMESTAMP, _Loader._timestamp)
_Loader.add_constructor(_MERGE, _Loader._merge_value)
_Loader.add_constructor("tag:yaml.org,2002:binary", _Loader._binary)

#: The loader every YAML read in compatfuzz goes through (compose with it for node lines).
KubernetesYAMLLoader = _Loader


def _go_float32_key(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 32)`` as sigs.k8s.io/yaml yaml.go
    ``convertToJSONableObject`` spells a float map key (``.inf``, ``.nan`` for Go's words)."""
    if math.isnan(value):
        return ".nan"
    try:
        f32: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        f32 = math.copysign(math.inf, value)
    if math.isinf(f32):
        return ".inf" if f32 > 0 else "-.inf"
    if f32 == 0:
        return "-0" if math.copysign(1, f32) < 0 else "0"
    text = repr(f32)
    for places in range(9):  # the shortest decimal that reads back as this float32
        text = f"{f32:.{places}e}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == f32:
            break
    mantissa, exponent = text.split("e")
    digits, exp, sign = mantissa.lstrip("-").replace(".", ""), int(exponent), "-" * (f32 < 0)
    if exp < -4 or exp >= 6:  # Go's %g switches to %e there for the shortest form
        point = f"{digits[0]}.{digits[1:]}" if len(digits) > 1 else digits
        return f"{sign}{point}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return f"{sign}{abs(float(text)):.{max(len(digits) - exp - 1, 0)}f}"


def _node_go_key(node: Any) -> Any:
    """The value go-yaml v2 decodes a mapping key node to (bool, int, float, str), or None
    for null and for a list or mapping."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == _NULL:
        return None
    text = str(node.value)
    if node.tag == _BOOL:
        return text in _TRUE
    if node.tag in (_INT, _FLOAT) and text and text[0] in "+-.0123456789":
        return _go_scalar(text)
    return text


def _node_json_key(node: Any) -> str | None:
    """The JSON key a mapping key node becomes in Kubernetes (sigs.k8s.io/yaml yaml.go
    ``convertToJSONableObject``): ``yes:``/``on:`` are ``"true"``, ``1.0:`` is ``"1"``,
    ``1e6:`` is ``"1e+06"``; None for a key it refuses ('unsupported map key': null, past
    int64, a list or mapping)."""
    value = _node_go_key(node)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float32_key(value)
    if isinstance(value, int):
        return str(value) if -_INT64 <= value < _INT64 else None
    return value  # type: ignore[no-any-return]


def _json_value(value: Any) -> Any:
    """json.Marshal writes a float64 in [1e-6, 1e21) with 'f' and no point when it is
    integral, which reads back as an integer (Go encoding/json ``floatEncoder``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        # Go writes the shortest digits that read back, then zeros: 18446744073709552000
        return int(value) if abs(value) < 2**53 else int(decimal.Decimal(repr(value)))
    if isinstance(value, bytes):  # !!binary: go-yaml decodes it into a Go string
        return value.decode("utf-8", "replace")
    return value


def _path(tokens: list[Any]) -> str:
    """``$.a.b[0]``, with the middle left out of very deep paths."""
    from compatfuzz.errors import _pointer_to_path

    pointer = "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)
    path = _pointer_to_path(pointer)
    if len(path) > 160:
        path = f"{path[:70]} ...({len(tokens)} levels)... {path[-70:]}"
    return path


def _too_deep(source: str, tokens: list[Any], line: int | str | None = None
              ) -> SchemaLoadError:
    at = f" (line {line})" if line else ""
    return SchemaLoadError(
        f"nested more than {MAX_DEPTH} levels deep at {_path(tokens)}{at}",
        source=source,
        hint="a schema this deep is generated or hostile; real ones nest a few dozen "
        "levels: flatten it with $defs and $ref",
    )


def check_depth(document: Any, *, source: str = "<memory>", text: str | None = None) -> None:
    """Raise :class:`SchemaLoadError` if ``document`` nests deeper than :data:`MAX_DEPTH`
    or holds a number JSON cannot carry (NaN, an infinity, an integer past float64).

    Iterative, in document order, so the check itself cannot overflow the stack and the
    first offending value is the first in the file; shared (aliased) values are visited
    once per path, which the alias bound keeps small. ``text`` (the JSON it was parsed
    from) lets the error give a line.
    """
    stack: list[tuple[Any, list[Any]]] = [(document, [])]
    while stack:
        node, tokens = stack.pop()
        if len(tokens) > MAX_DEPTH:
            raise _too_deep(source, tokens)
        if isinstance(node, dict):
            stack.extend(reversed([(v, [*tokens, k]) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(v, [*tokens, i]) for i, v in enumerate(node)]))
        elif isinstance(node, _NotJson | float) or (
                isinstance(node, int) and not isinstance(node, bool)
                and node.bit_length() > 1024):
            bad = _not_json(node)
            if bad is not None:
                raise _not_json_error(source, tokens, bad, node, text)


def _not_json(value: Any) -> str | None:
    """Why ``value`` cannot be a JSON number, or None."""
    if isinstance(value, _NotJson):
        value = value.text
        if value.startswith("an integer"):
            return f"{value}, past what a float64 holds"
    if isinstance(value, str):
        low = value.lower().lstrip("+-")
        if "nan" in low:
            return f"{value} is not a number JSON can hold (JSON has no NaN)"
        if "inf" in low:
            return f"{value} is not a number JSON can hold (JSON has no infinity)"
        digits = sum(c.isdigit() for c in value)
        if "." not in value and "e" not in low and digits > _MAX_INT_DIGITS:
            return f"an integer of {digits:,} digits, past what a float64 holds"
        return f"{value} is past what a float64 holds (about 1.8e308)"
    if isinstance(value, float) and math.isnan(value):
        return "NaN is not a number JSON can hold (JSON has no NaN)"
    if isinstance(value, float) and math.isinf(value):
        return f"{value} is not a number JSON can hold (JSON has no infinity)"
    if isinstance(value, int) and value.bit_length() > 1024:
        size = f"{len(str(abs(value))):,}" if value.bit_length() < 14000 else "thousands of"
        return f"an integer of {size} digits, past what a float64 holds"
    return None


_JSON_NUMBER = re.compile(r'"(?:[^"\\]|\\.)*"|(-?(?:Infinity|NaN|\d[\d.eE+-]*))')


def _not_json_error(source: str, tokens: list[Any], why: str, node: Any,
                    text: str | None) -> SchemaLoadError:
    line = node.line if isinstance(node, _NotJson) else None
    if line is None and text is not None and isinstance(node, _NotJson):
        for match in _JSON_NUMBER.finditer(text):
            if match.group(1) == node.text:
                line = text.count("\n", 0, match.start()) + 1
                break
    at = f" (line {line})" if line else ""
    return SchemaLoadError(
        f"{why}, at {_path(tokens)}{at}", source=source,
        hint="write a finite number within +-1.8e308: Kubernetes and most JSON readers "
        "hold numbers as float64, and JSON has no NaN or infinity (drop such a value "
        "from enum/default, or leave the bound out)",
    )


def _check_nodes(root: Any, source: str) -> None:
    """Bound alias expansion and depth on a composed YAML node graph (before building).

    One iterative post-order pass computes, per distinct node, its expanded size and its
    height; an alias is the same node object, so sharing costs nothing to count.
    """
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = _node_children(node)
            size[key] = 1 + sum(size[id(c)] for c in kids)
            height[key] = 1 + max((height[id(c)] for c in kids), default=0)
            continue
        if key in size:
            continue
        if key in on_path:
            raise SchemaLoadError(
                f"a YAML alias refers to a value that contains it, at "
                f"{_path(_path_to(root, node))} (line {node.start_mark.line + 1})",
                source=source,
                hint="JSON has no cycles: write the value out instead of aliasing it",
            )
        on_path.add(key)
        if isinstance(node, yaml.MappingNode):
            _check_keys(root, node, source)
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(_node_children(node)))
    if height[id(root)] > MAX_DEPTH + 1:  # a scalar at depth MAX_DEPTH is fine
        tokens, node = _descend(root, lambda n, depth: (
            depth <= MAX_DEPTH + 1 and height[id(n)] + depth == height[id(root)]))
        raise _too_deep(source, tokens, node.start_mark.line + 1)
    added = size[id(root)] - len(size)
    if added > MAX_ALIAS_EXPANSION:
        tokens, node = _descend(root, lambda n, depth: size[id(n)] > MAX_ALIAS_EXPANSION)
        raise SchemaLoadError(
            f"YAML aliases expand to {size[id(root)]:,} values, {added:,} more than written "
            f"(at most {MAX_ALIAS_EXPANSION:,}), at {_path(tokens)} (line "
            f"{node.start_mark.line + 1}): an alias bomb ('billion laughs')?",
            source=source,
            hint="write the values out, or use fewer nested aliases (&anchor / *alias)",
        )




def _check_keys(root: Any, node: Any, source: str) -> None:
    """Refuse a mapping that names one key twice (PyYAML keeps the last one silently;
    YAMLToJSONStrict refuses it), also as two spellings of one JSON key (``on``, ``yes``;
    ``1``, ``0x1``, ``1.0``: Kubernetes keeps either), or a key JSON has no spelling for."""
    seen: dict[str, Any] = {}
    same: dict[tuple[type, Any], Any] = {}  # Go's map key equality: type and value
    for key, _ in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag == _MERGE:
            continue  # merged keys ('<<') may be overridden: that is what they are for
        text = _node_json_key(key)
        value = _node_go_key(key)
        first = None if text is None else seen.setdefault(text, key)
        if not (isinstance(value, float) and math.isnan(value)):  # NaN equals no key in Go
            first = first if first is not key else same.setdefault((type(value), value), key)
        if text is not None and first is key:
            continue
        where = _path(_path_to(root, node) if node is not root else [])
        if text is None:
            what = (f"the key {key.value!r}" if isinstance(key, yaml.ScalarNode)
                    else "a list or mapping as a key")
            raise SchemaLoadError(
                f"the mapping at {where} has {what} (line {key.start_mark.line + 1}), which "
                "Kubernetes cannot turn into a JSON key (sigs.k8s.io/yaml: 'unsupported map "
                "key')", source=source, hint="quote the key so that it is a string, or "
                "remove it")
        assert first is not None  # a key seen before, as text or as Go's value
        raise _duplicate(source, where, key.value, key.start_mark.line + 1,
                         first.start_mark.line + 1,
                         same=text if first.value != key.value else None)


def _duplicate(source: str, where: str, key: str, line: int, first: int | None, *,
               same: str | None = None) -> SchemaLoadError:
    earlier = f" (first at line {first})" if first else ""
    also = f", both the JSON key {same!r} in Kubernetes" if same is not None else ""
    return SchemaLoadError(
        f"key {key!r} is set twice in the mapping at {where}: line {line}{earlier}{also}",
        source=source,
        hint=f"keep one {key!r}: YAML and JSON readers disagree on which one wins "
        "(Kubernetes refuses the file: 'key already set in map')",
    )


class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


_JSON_LEX = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')


def _json_duplicate(text: str, source: str) -> SchemaLoadError:
    """The error for the first key JSON ``text`` repeats in one object, with path and
    line; run only once ``_unique_pairs`` has found that there is one."""
    # per open container: [keys seen and their lines (None for a list), index or key,
    # expecting a key]
    frames: list[list[Any]] = []
    tokens: list[Any] = []
    for match in _JSON_LEX.finditer(text):
        tok = match.group()
        if tok in "[{":
            if frames:
                tokens.append(frames[-1][1])
            frames.append([{}, None, True] if tok == "{" else [None, 0, False])
        elif tok in "]}":
            frames.pop()
            if frames:
                tokens.pop()
        elif tok == ",":
            if frames and frames[-1][0] is None:
                frames[-1][1] += 1
            elif frames:
                frames[-1][2] = True
        elif tok != ":" and frames and frames[-1][0] is not None and frames[-1][2]:
            key = json.loads(tok)
            line = text.count("\n", 0, match.start()) + 1
            seen = frames[-1][0]
            if key in seen:
                return _duplicate(source, _path(tokens), key, line, seen[key])
            seen[key] = line
            frames[-1][1], frames[-1][2] = key, False
    return SchemaLoadError("an object names one key twice", source=source,
                           hint="keep one of each key")


def _descend(root: Any, wanted: Any) -> tuple[list[Any], Any]:
    """Walk down from ``root`` into the first child for which ``wanted(child, depth)``
    holds (``depth`` 1 for the root's children); return the path tokens and the node where
    no child does."""
    tokens: list[Any] = []
    node = root
    while True:
        if isinstance(node, yaml.MappingNode):
            pairs = [(_label(k), v) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            pairs = list(enumerate(node.value))
        else:
            break
        depth = len(tokens) + 1
        nxt = next(((t, v) for t, v in pairs if wanted(v, depth)), None)
        if nxt is None:
            break
        tokens.append(nxt[0])
        node = nxt[1]
    return tokens, node


def _path_to(root: Any, target: Any) -> list[Any]:
    """Path tokens of the first way down from ``root`` to ``target`` (breadth first)."""
    queue: list[tuple[Any, list[Any]]] = [(root, [])]
    seen: set[int] = set()
    for node, tokens in queue:  # grows while iterating: a breadth-first walk
        if node is target and tokens:
            return tokens
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            queue.extend((v, [*tokens, _label(k)]) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            queue.extend((v, [*tokens, i]) for i, v in enumerate(node.value))
    return []


def _node_children(node: Any) -> list[Any]:
    value = node.value
    if isinstance(node, yaml.MappingNode):
        return [n for pair in value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(value)
    return []


def _label(node: Any) -> Any:
    return node.value if isinstance(node, yaml.ScalarNode) else "?"


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _json_too_deep_line(text: str) -> str | None:
    """``L, column C`` where JSON ``text`` first nests deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line_start = text.rfind("\n", 0, match.start()) + 1
                line = text.count("\n", 0, match.start()) + 1
                return f"{line}, column {match.start() - line_start + 1}"
        elif token in "]}":
            depth -= 1
    return None


def _yaml_too_deep(text: str, source: str) -> SchemaLoadError | None:
    """The depth error for YAML ``text``, found from the pure-Python parser's events.

    Why not the parse itself: libyaml (in PyYAML 6.0.4's wheels) refuses flow nesting past
    its own limit with "exceeded maximum nesting depth" before a node exists, and the
    pure-Python composer recurses; the event stream is flat, so this walk finds the first
    value deeper than :data:`MAX_DEPTH`, its path and its line under every PyYAML release.
    """
    found = yaml_deep_path(text)
    return None if found is None else _too_deep(source, *found)


def yaml_deep_path(text: str) -> tuple[list[Any], int] | None:
    """The path and line of the first value of YAML ``text`` deeper than :data:`MAX_DEPTH`."""
    tokens: list[Any] = []
    # per open container: [is a mapping, (mappings) the next node is a key]
    frames: list[list[bool]] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.NodeEvent) and frames:
                is_map, want_key = frames[-1]
                if is_map and want_key:  # a key: its label names the value that follows
                    frames[-1][1] = False
                    tokens[-1] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                    if isinstance(event, yaml.CollectionStartEvent):
                        frames.append([isinstance(event, yaml.MappingStartEvent), True])
                        tokens.append(None)
                    continue
                if is_map:
                    frames[-1][1] = True
                else:
                    tokens[-1] = 0 if tokens[-1] is None else tokens[-1] + 1
            if isinstance(event, yaml.NodeEvent) and len(tokens) > MAX_DEPTH:
                mark = event.start_mark
                return tokens, (mark.line + 1 if mark is not None else 0)
            if isinstance(event, yaml.CollectionStartEvent):
                frames.append([isinstance(event, yaml.MappingStartEvent), True])
                tokens.append(None)
            elif isinstance(event, yaml.CollectionEndEvent):
                frames.pop()
                tokens.pop()
    except yaml.YAMLError:
        return None
    return None


def _load_yaml(text: str, source: str) -> list[Any]:
    loader = _Loader(text)
    try:
        docs = []
        while loader.check_node():
            node = loader.get_node()
            _check_nodes(node, source)
            doc = loader.construct_document(node)
            check_depth(doc, source=source)  # the numbers the constructors marked
            docs.append(doc)
        return docs
    finally:
        loader.dispose()


def parse_documents(text: str, *, source: str = "<string>") -> list[Any]:
    """Parse JSON or (multi-document) YAML text; empty documents are dropped.

    Raises:
        SchemaLoadError: malformed text, an unsafe YAML tag, aliases that expand past
            :data:`MAX_ALIAS_EXPANSION`, or nesting deeper than :data:`MAX_DEPTH`.
    """
    stripped = text.lstrip()
    looks_json = source.endswith(".json") or stripped[:1] in ("{", "[")
    if looks_json:
        try:
            doc = json.loads(text, object_pairs_hook=_unique_pairs, parse_int=_json_int,
                             parse_float=_json_float, parse_constant=_NotJson)
        except _DuplicateKey:
            raise _json_duplicate(text, source) from None
        except RecursionError:
            raise _too_deep(source, [], _json_too_deep_line(text)) from None
        except json.JSONDecodeError as exc:
            if source.endswith(".json"):
                raise SchemaLoadError(
                    f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                    source=source,
                    hint=f"fix the syntax at line {exc.lineno} column {exc.colno} (a missing "
                    "comma, quote or bracket, or a trailing comma, is the usual cause)",
                ) from None
            # not a .json file: it may still be YAML that happens to start with a brace
        else:
            check_depth(doc, source=source, text=text)
            return [doc]
    try:
        docs = _load_yaml(text, source)
    except RecursionError:  # the pure-Python composer, without libyaml
        raise _yaml_too_deep(text, source) or _too_deep(source, []) from None
    except yaml.constructor.ConstructorError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SchemaLoadError(
            f"invalid YAML{where}: {exc.problem}",
            source=source,
            hint="compatfuzz reads YAML with a safe loader: remove the tag (!!python/..., "
            "!Ref ...) or quote the value so it is a plain string",
        ) from None
    except yaml.MarkedYAMLError as exc:
        if "nesting depth" in str(exc.problem):  # libyaml's own limit (PyYAML >= 6.0.3)
            deep = _yaml_too_deep(text, source)
            if deep is not None:
                raise deep from None
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        what = " ".join(p for p in (exc.context, exc.problem) if p)
        line = mark.line + 1 if mark else 0
        raise SchemaLoadError(
            f"invalid YAML at {where}: {what}",
            source=source,
            hint=f"check the indentation and quoting at line {line} and the line above it "
            "(YAML indents with spaces, never tabs; quote values that contain ': ' or '#')",
        ) from None
    except yaml.YAMLError as exc:
        raise SchemaLoadError(f"invalid YAML: {exc}", source=source,
                              hint="check that the file is YAML or JSON") from None
    return [d for d in docs if d is not None]


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device"))


def _not_regular(path: Path, mode: int) -> SchemaLoadError:
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return SchemaLoadError(
        f"is {kind}, not a regular file", source=str(path),
        hint="pass a regular file; compatfuzz never reads devices or pipes, which may "
        "never end (/dev/zero) or block forever (a FIFO): save the stream to a file first",
    )


def max_file_bytes() -> int:
    """:data:`MAX_FILE_BYTES`, or ``COMPATFUZZ_MAX_FILE_BYTES`` when set (a bigger file)."""
    raw = os.environ.get("COMPATFUZZ_MAX_FILE_BYTES", "")
    return int(raw) if raw.isdigit() else MAX_FILE_BYTES


def read_text(path: str | os.PathLike[str], *, encoding: str = "utf-8") -> str:
    """Return the text of a *regular* file of at most :func:`max_file_bytes` bytes.

    The file is checked with ``stat`` before it is opened, and again on the open
    descriptor (opened non-blocking, so a path swapped for a FIFO in between cannot hang);
    then at most the limit plus one byte is read. Missing files, folders, permissions
    and undecodable text raise the usual ``OSError`` / ``UnicodeDecodeError`` for the
    caller to word.

    Raises:
        SchemaLoadError: a device, FIFO or socket, or a file larger than the limit.
    """
    p = Path(path)
    mode = os.stat(p).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(21, "Is a directory", str(p))
    if not stat.S_ISREG(mode):
        raise _not_regular(p, mode)
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(p, mode)
        limit = max_file_bytes()
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise SchemaLoadError(
            f"is larger than {limit:,} bytes, the most compatfuzz reads", source=str(p),
            hint="check that this is the right file (a schema or config is rarely over a "
            "few MB); for a bigger one, set COMPATFUZZ_MAX_FILE_BYTES",
        )
    return data.decode(encoding)


def read_documents(path: str | os.PathLike[str]) -> list[Any]:
    """Return the documents of a JSON or YAML file (all of a ``---``-separated stream).

    Empty documents are dropped. Only safe YAML tags are accepted. Only regular files
    are read, at most :data:`MAX_FILE_BYTES` of them (see :func:`read_text`).

    Raises:
        SchemaLoadError: the file is missing, unreadable, not a regular file, too large,
            or malformed; the message names the file, the line and column, and a fix.

    .. versionadded:: 0.1
    """
    p = Path(path)
    try:
        text = read_text(p, encoding="utf-8-sig")
    except FileNotFoundError:
        raise SchemaLoadError("file not found", source=str(p),
                              hint="check the path (relative paths are taken from "
                              f"the current directory, {Path.cwd()})") from None
    except IsADirectoryError:
        raise SchemaLoadError("is a directory, not a schema file", source=str(p),
                              hint="pass one .yaml/.json file") from None
    except UnicodeDecodeError as exc:
        raise SchemaLoadError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                              source=str(p), hint="save the file as UTF-8") from None
    except OSError as exc:
        raise SchemaLoadError(f"cannot read: {exc.strerror}", source=str(p),
                              hint="check the file permissions") from None
    return parse_documents(text, source=str(p))


_CACHE: dict[str, tuple[int, int, list[Any]]] = {}


def read_documents_cached(path: Path) -> list[Any]:
    """Like :func:`read_documents`, memoised on (path, mtime, size).

    Callers must treat the result as read-only: every transform in this package is pure,
    so sharing the parsed ``_definitions.json`` (1.8 MB) between 300 kinds is safe.
    """
    key = str(path)
    try:
        st = path.stat()
    except OSError:
        return read_documents(path)  # raises the right SchemaLoadError
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
        return hit[2]
    docs = read_documents(path)
    _CACHE[key] = (st.st_mtime_ns, st.st_size, docs)
    return docs
