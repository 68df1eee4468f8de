"""One problem the API server finds in a CRD, worded as ``field.Error.Error()`` words it.

``CRDProblem`` is what :func:`compatfuzz.apiserver.validate_crd` returns; this module also
holds the pieces that make its text identical to the server's: a field path
(``k8s.io/apimachinery/pkg/util/validation/field/path.go``: ``Child`` adds ``.name``,
``Index`` adds ``[i]``, ``Key`` adds ``[key]``), the rendering of the bad value
(``field/errors.go``, ``ErrorBody``: Go's ``%v`` for numbers and booleans, ``%q`` for
strings, ``json.Marshal`` for anything else), the conversion of a field path back to a
JSON pointer into the document the user wrote (name the file and line), and
the detail of a CEL rule that does not compile (:func:`compile_detail`), which both the
schema checks (``_crd_schema``) and the defaults checks (``_crd_defaults``) report.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CRDProblem", "field_pointer"]

#: ``field.ErrorType.String()`` for the types CRD validation uses.
REQUIRED = "Required value"
INVALID = "Invalid value"
FORBIDDEN = "Forbidden"
NOT_SUPPORTED = "Unsupported value"
DUPLICATE = "Duplicate value"
TOO_MANY = "Too many"
TOO_LONG = "Too long"
INTERNAL = "Internal error"
#: not a field.Error: the request body does not decode into the v1 types (HTTP 400).
DECODE = "Decode error"

_WITH_VALUE = frozenset({INVALID, NOT_SUPPORTED, DUPLICATE, TOO_MANY})


class _Omitted:
    """No bad value to print (``field.OmitValueType``)."""


OMIT = _Omitted()


@dataclass(frozen=True)
class CRDProblem:
    """One error (or, with ``warning``, one warning) the API server reports for a CRD.

    ``field`` is the server's field path (``spec.validation.openAPIV3Schema.properties[spec]
    .type``; a CRD whose versions all have the same schema is validated with that schema
    under ``spec.validation``, as the server converts it), ``kind`` the
    ``field.ErrorType`` text (``Required value``, ``Invalid value``, ``Forbidden``,
    ``Unsupported value``, ``Duplicate value``, ``Too many``) and ``message`` the whole
    ``field.Error.Error()`` text. :func:`field_pointer` turns ``field`` into a JSON pointer
    into the document.

    .. versionadded:: 0.1.0
    """

    field: str
    kind: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"warning: {self.message}" if self.warning else self.message


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote`` (``%q``): printable runes as they are, the rest escaped."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ch.isprintable() and (ch == " " or not ch.isspace()):
            out.append(ch)
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\\ufffd")
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                  "\t": "\\t", "\v": "\\v"}


def go_float(x: float) -> str:
    """Go's ``%v`` of a float64 (shortest representation, exponent at 1e21 / 1e-4)."""
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if math.isnan(x):
        return "NaN"
    if x == int(x) and abs(x) < 1e21:
        return str(int(x)) if x or math.copysign(1, x) > 0 else "-0"
    text = repr(x)
    if "e" in text:
        mantissa, exp = text.split("e")
        sign = "-" if exp.startswith("-") else "+"
        digits = exp.lstrip("+-").rjust(2, "0")
        return f"{mantissa}e{sign}{digits}"
    return text


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value (Go escapes ``<``, ``>``, ``&``)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def render_value(value: Any) -> str:
    """The bad value as ``ErrorBody`` prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, GoJSON):
        return value.text
    return go_json(value)


class GoJSON:
    """A value already rendered as ``json.Marshal`` renders a Go struct."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def problem(kind: str, path: str, value: Any = OMIT, detail: str = "", *,
            warning: bool = False) -> CRDProblem:
    """A ``field.Error`` of ``kind`` at ``path``, worded as ``Error()`` words it."""
    body = kind
    if kind in _WITH_VALUE and value is not OMIT:
        body = f"{kind}: {render_value(value)}"
    if detail:
        body += f": {detail}"
    return CRDProblem(path, kind, f"{path}: {body}", warning)


def required(path: str, detail: str = "") -> CRDProblem:
    return problem(REQUIRED, path, detail=detail)


def forbidden(path: str, detail: str) -> CRDProblem:
    return problem(FORBIDDEN, path, detail=detail)


def invalid(path: str, value: Any, detail: str) -> CRDProblem:
    return problem(INVALID, path, value, detail)


def not_supported(path: str, value: Any, valid: Sequence[str]) -> CRDProblem:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return problem(NOT_SUPPORTED, path, value, detail)


def child(path: str, *names: str) -> str:
    """``Path.Child``: ``path.name`` (or ``name`` at the root)."""
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


_STEP = re.compile(r"\.([^.\[\]]+)|\[([^\]]*)\]")


def field_pointer(problem: CRDProblem | str, document: Mapping[str, Any]) -> str:
    """Return the JSON pointer (RFC 6901) into ``document`` that a problem's field names.

    The server validates the internal form of a CRD: a schema, ``subresources``,
    ``additionalPrinterColumns`` or ``selectableFields`` that every version shares is
    reported under ``spec.validation`` (``spec.subresources``, ...); the pointer then goes
    to the first version's copy (``/spec/versions/0/schema``). A step the document does not
    have (a required field that is missing) ends the pointer at its parent, so the pointer
    always names something the user wrote. Dotted children the server names in one step
    (``openAPIV3Schema.type``) are split.

    >>> doc = {"spec": {"versions": [{"schema": {"openAPIV3Schema": {
    ...     "properties": {"spec": {}}}}}]}}
    >>> field_pointer("spec.validation.openAPIV3Schema.properties[spec].type", doc)
    '/spec/versions/0/schema/openAPIV3Schema/properties/spec'

    .. versionadded:: 0.1.0
    """
    text = problem.field if isinstance(problem, CRDProblem) else problem
    steps: list[str | int] = []
    first, _, rest = text.partition(".")
    steps.append(first.split("[")[0])
    if "[" in first:
        rest = first[first.index("["):] + ("." + rest if rest else "")
    elif rest:
        rest = "." + rest
    for m in _STEP.finditer(rest):
        if m.group(1) is not None:
            steps.append(m.group(1))
        else:
            raw = m.group(2)
            steps.append(int(raw) if raw.isdigit() else raw)
    hoisted = {"validation": "schema", "subresources": "subresources",
               "additionalPrinterColumns": "additionalPrinterColumns",
               "selectableFields": "selectableFields"}
    if len(steps) >= 2 and steps[0] == "spec" and steps[1] in hoisted:
        spec = document.get("spec")
        present = isinstance(spec, dict) and steps[1] in spec
        if not present:
            steps[1:2] = ["versions", 0, hoisted[str(steps[1])]]
    pointer = ""
    node: Any = document
    for step in steps:
        if isinstance(node, dict) and str(step) in node:
            node = node[str(step)]
            pointer += "/" + str(step).replace("~", "~0").replace("/", "~1")
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            pointer += f"/{step}"
        else:
            break
    return pointer


_WHOLE = ("cel expression must evaluate to a bool", "messageExpression must evaluate to a string")


def compile_detail(problems: list[str], what: str = "") -> str:
    """The server's detail for a compile result: the "must evaluate" texts as they are,
    otherwise ``compilation failed: ERROR: ...`` (cel-go's issues, without locations)."""
    if len(problems) == 1 and problems[0] in _WHOLE:
        return problems[0]
    return f"{what}compilation failed: " + "\n".join(f"ERROR: {p}" for p in problems)
