"""Check Kubernetes ``x-kubernetes-validations`` (CEL) rules on generated values.

Why this exists: CRDs state invariants that JSON Schema cannot express (``self.minReplicas
<= self.maxReplicas``, "names are unique") as CEL rules. An object that breaks one is
rejected by the API server, so a compatibility suite built from such objects would test
nothing. The strategy compiler cannot build these constraints by construction, so it
filters: ``strategy.filter(compile_rules(node, path=...).check)``.

Every rule falls into one of three groups, decided once when the node is compiled:

* **supported**: parsed by cel-python, uses only variables and functions we can evaluate;
  ``check(value)`` evaluates it with ``self = value``.
* **transition**: mentions ``oldSelf``; Kubernetes only evaluates it on update, and we
  generate objects as if created, so it is not checked (and is not a problem).
* **unsupported**: does not parse (e.g. the optional syntax ``self.?x``), calls a function
  we do not implement, or names an unknown variable. The compiler warns about these
  (``UnsupportedRuleWarning``) because generated objects may break them.

Values are converted to CEL the way the API server does it, directed by the schema:
objects become maps (with Kubernetes' escaping of property names such as ``foo-bar`` ->
``foo__dash__bar``), ``number`` becomes ``double`` even for ``3``, ``format: date-time``/
``date`` strings become timestamps, ``format: duration`` strings durations and ``format:
byte`` strings bytes. Sub-schemas behind a ``$ref`` are converted only when the caller passes
``resolve``; otherwise they are converted by their JSON shape alone.

A rule that raises a CEL error on a particular value (``self.x`` when ``x`` is absent, an
index out of range) does not hold for that value, exactly as on the API server. A rule
that turns out to call an undeclared function at evaluation time, or that crashes
cel-python itself, is moved to ``unsupported`` on the spot with an
``UnsupportedRuleWarning`` and from then on no longer filters.

We use cel-python's ``InterpretedRunner``: its ``CompiledRunner`` (3x faster) evaluates
``has(self.x) ? self.x > 1 : true`` to an error in 0.5, and such guards are the most common
shape of Kubernetes rules.
"""

from __future__ import annotations

import base64
import datetime
import json
import re
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.evaluation import CELEvalError, base_functions

from compatfuzz.errors import SchemaLoadError, UnsupportedRuleWarning, UnsupportedSchema
from compatfuzz.strategies._cel_cost import (
    PER_CALL_LIMIT,
    CostExceeded,
    MeteredRunner,
    charging,
    metered,
)
from compatfuzz.strategies._cel_functions import (
    FUNCTIONS,
    GO_DOUBLE,
    GO_INT,
    GO_UINT,
    LIST_MIN,
    SETS,
    parse_go_duration,
)

__all__ = ["CompiledRules", "UnsupportedRule", "check_rules", "compile_rules", "holds_without",
           "to_cel", "transition_holds"]

Resolver = Callable[[str], Mapping[str, Any]]

#: Macros cel-python expands itself, with their accepted argument counts.
_MACROS: dict[str, tuple[int, ...]] = {
    "all": (2,), "exists": (2,), "exists_one": (2,), "map": (2,), "filter": (2,), "has": (1,),
}
#: Functions of the CEL standard definitions that cel-python 0.5 implements.
_STANDARD = frozenset(base_functions) - {"_[_]"} | {"dyn"}
_KNOWN_FUNCTIONS = frozenset(_STANDARD | set(FUNCTIONS) | set(_MACROS))
#: Identifiers that are not variables: type names usable in ``type(x) == int``.
_TYPE_NAMES = frozenset({
    "int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
})
_TRANSITION_VARIABLE = "oldSelf"
#: Where the functions we lack come from, so that reports say what is missing.
_LIBRARY_OF: dict[str, str] = {
    **dict.fromkeys(("hasValue", "orValue", "value", "of", "none", "optMap", "optFlatMap",
                     "or"), "CEL optional types"),
    **dict.fromkeys(("validate", "dns1123Label", "dns1123Subdomain", "dns1035Label",
                     "qualifiedName", "dns1123LabelPrefix", "dns1123SubdomainPrefix",
                     "labelValue", "uri", "uuid", "byte", "date", "datetime",
                     "named"), "Kubernetes format library"),
    **dict.fromkeys(("quote", "format", "ascii"), "CEL strings extension"),
    # environment/base.go gives stored rules ext.Strings(ext.StringsVersion(2)): no reverse
    "reverse": "CEL strings extension version 3, which Kubernetes does not enable",
    **dict.fromkeys(("greatest", "least", "ceil", "floor", "round", "abs", "isInf",
                     "isNaN", "bitAnd", "bitOr"), "CEL math extension"),
    **dict.fromkeys(("check", "allowed", "reason", "path", "group", "resource",
                     "subresource", "namespace", "name", "errored", "error",
                     "fieldSelector", "labelSelector"), "Kubernetes authorizer library"),
    **dict.fromkeys(("distinct", "flatten", "range", "slice", "sort", "sortBy"),
                    "CEL lists extension"),
    **dict.fromkeys(("encode", "decode"), "CEL encoders extension"),
}

#: Library functions Kubernetes declares only as globals (``sign(q)``, not ``q.sign()``:
#: k8s.io/apiserver/pkg/cel/library/quantity.go declares ``quantity_sign`` with
#: ``cel.Overload``) and only as methods; the API server refuses a rule calling one the
#: other way, while cel-python would evaluate both alike.
_GLOBAL_ONLY = frozenset({"quantity", "isQuantity", "sign", "url", "isURL", "isIP", "cidr",
                          "isCIDR"})
_MEMBER_ONLY = frozenset({
    "charAt", "indexOf", "lastIndexOf", "lowerAscii", "upperAscii", "replace", "split",
    "substring", "trim", "reverse", "join", "isSorted", "sum", "min", "max", "find",
    "findAll", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
    "isInteger", "asInteger", "asApproximateFloat", "add", "sub", "compareTo",
    "isGreaterThan", "isLessThan", "family", "isUnspecified", "isLoopback",
    "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP",
    "containsCIDR", "masked", "prefixLength", "contains", "equivalent", "intersects",
})

#: Every function a rule can call, charging the CEL cost of what it reads and builds
#: (type names such as ``int`` stay classes: ``type(x) == int`` compares with them).
_CHARGED = {
    name: f if isinstance(f, type) else charging(f, name)
    for name, f in {**base_functions, **FUNCTIONS}.items()
}

#: Why a rule failed when it ran out of cost (apiextensions-apiserver's messages).
COST_EXCEEDED = "cost budget exceeded"
BUDGET_EXHAUSTED = ("validation failed due to running out of cost budget, no further "
                    "validation rules will be run")

_CACHE_LIMIT = 4096
_CACHEABLE_KEY_CHARS = 2048


@dataclass(frozen=True)
class UnsupportedRule:
    """A rule we cannot check, where it sits (``path``) and why (``reason``)."""

    rule: str
    path: str
    reason: str


@dataclass(frozen=True)
class _Program:
    rule: str
    runner: Any  # celpy.Runner; typed loosely because its evaluate() returns a Result union
    tree: Any = field(default=None, compare=False, repr=False)  # for the cost estimate


class _Verdict:
    """Outcome of a static look at one rule, cached by rule text."""

    __slots__ = ("invalid", "program", "reason", "transition")

    def __init__(self, program: _Program | None, reason: str = "",
                 transition: bool = False, invalid: bool = False) -> None:
        self.program = program
        self.reason = reason
        self.transition = transition
        #: the API server refuses a CRD with this rule (it does not parse)
        self.invalid = invalid


_ENVIRONMENT: celpy.Environment | None = None
_VERDICTS: dict[str, _Verdict] = {}
_DEMOTED: dict[str, str] = {}
_LOCK = threading.Lock()
#: rule text -> evaluations that ran past a generation-time ``cost_limit`` (see
#: ``CompiledRules.give_up_after``); shared by every rule set of the process, because one
#: rule is checked by several (the node's filter, the repairs of construction, the check of
#: the nodes below), and each learning the rule is too costly on its own paid seconds.
_COSTLY: dict[str, int] = {}


def too_costly(rule: str, strikes: int) -> bool:
    """Whether ``rule`` ran past a generation-time cost limit ``strikes`` times."""
    return _COSTLY.get(rule, 0) >= strikes


def _environment() -> celpy.Environment:
    """The process-wide cel-python environment, built on first use.

    ``celpy.Environment()`` raises the interpreter's recursion limit to 2500 as a side
    effect; inside a Hypothesis test that triggers "the recursion limit will not be reset"
    (a HypothesisWarning, an error under ``filterwarnings = error``), so we put it back.
    A rule nested deeply enough to need more counts as crashing cel-python (demoted).
    """
    global _ENVIRONMENT  # noqa: PLW0603 - one lazily built environment per process
    if _ENVIRONMENT is None:
        limit = sys.getrecursionlimit()
        try:
            _ENVIRONMENT = celpy.Environment(runner_class=MeteredRunner)
        finally:
            sys.setrecursionlimit(limit)
    return _ENVIRONMENT


def _walk(tree: lark.Tree[Any]) -> Iterator[lark.Tree[Any]]:
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in node.children if isinstance(c, lark.Tree))


def _arg_count(exprlist: Any) -> int:
    return len(exprlist.children) if isinstance(exprlist, lark.Tree) else 0


def _bound_variable(exprlist: Any) -> str | None:
    """Name bound by a comprehension macro (``x`` in ``self.all(x, ...)``)."""
    if not isinstance(exprlist, lark.Tree) or not exprlist.children:
        return None
    node: Any = exprlist.children[0]
    while isinstance(node, lark.Tree):
        children = [c for c in node.children if c is not None]
        if node.data == "ident":
            return str(children[0])
        if len(children) != 1:
            return None
        node = children[0]
    return None


def _analyse(rule: str) -> _Verdict:
    env = _environment()
    try:
        ast = env.compile(rule)
    except Exception as exc:  # CELParseError and lark errors both mean "cannot parse"
        column = getattr(exc, "column", None)
        where = f" at column {column}" if column else ""
        if ".?" in rule or "[?" in rule or "?." in rule or "{?" in rule:
            return _Verdict(None, f"optional syntax (.?field, [?key]) is not supported "
                                  f"by cel-python{where}")
        line = getattr(exc, "line", None)
        at = f" at line {line}, column {column}" if line and column else where
        return _Verdict(None, f"syntax error{at}", invalid=True)
    bound: set[str] = set()
    calls: list[tuple[str, int]] = []
    misused: list[str] = []
    idents: set[str] = set()
    for node in _walk(ast):
        if node.data == "member_dot_arg":
            name = str(node.children[1])
            args = node.children[2] if len(node.children) > 2 else None
            calls.append((name, _arg_count(args) + 1))
            if name in _GLOBAL_ONLY:
                misused.append(f"{name}() is a global function in Kubernetes CEL, not a "
                               f"method: write {name}(x), not x.{name}()")
            if name in _MACROS and name != "has":
                variable = _bound_variable(args)
                if variable:
                    bound.add(variable)
                calls[-1] = (name, _arg_count(args))
        elif node.data in ("ident_arg", "dot_ident_arg"):
            args = node.children[1] if len(node.children) > 1 else None
            calls.append((str(node.children[0]), _arg_count(args)))
            if str(node.children[0]) in _MEMBER_ONLY:
                misused.append(f"{node.children[0]}() is a method in Kubernetes CEL, not a "
                               f"global function: write x.{node.children[0]}(...)")
        elif node.data == "ident":
            idents.add(str(node.children[0]))
        elif node.data == "member_object":
            return _Verdict(None, "message construction (Type{field: ...}) is not supported")
    unknown_calls = sorted({n for n, _ in calls if n not in _KNOWN_FUNCTIONS}, key=rule.find)
    if unknown_calls:
        names = ", ".join(f"{n}()" for n in unknown_calls)
        libraries = list(dict.fromkeys(_LIBRARY_OF[n] for n in unknown_calls if n in _LIBRARY_OF))
        suffix = f" ({'; '.join(libraries)}: not implemented)" if libraries else ""
        plural = "s" if len(unknown_calls) > 1 else ""
        return _Verdict(None, f"unknown function{plural} {names}{suffix}")
    if misused:
        return _Verdict(None, f"the API server refuses this rule: {misused[0]}")
    for name, count in calls:
        if name in _MACROS and count not in _MACROS[name]:
            return _Verdict(None, f"macro {name}() with {count} arguments is not supported")
    transition = _TRANSITION_VARIABLE in idents
    unknown = sorted(idents - bound - _TYPE_NAMES - {"self", _TRANSITION_VARIABLE, "sets"})
    if unknown:
        return _Verdict(None, f"unknown variable {unknown[0]!r}")
    tree = _collapse(_rename_conversions(_rename_min(ast)))
    program = _Program(rule, env.program(tree, functions=_CHARGED), tree)
    return _Verdict(program, transition=transition)


def _rename_min(tree: lark.Tree[Any]) -> lark.Tree[Any]:
    """Route ``list.min()`` to the lists library's ``min`` (``LIST_MIN``), in place.

    cel-python evaluates a ``.min()`` method itself (a non-standard reduce macro that
    raises on ``[0.5, -1]``, where Kubernetes' lists.go compares across int and double);
    a name no rule can spell sends it to our function instead.
    """
    for node in _walk(tree):
        if node.data == "member_dot_arg" and str(node.children[1]) == "min":
            token = node.children[1]
            node.children[1] = token.update(value=LIST_MIN) if isinstance(
                token, lark.Token) else LIST_MIN
    return tree


def _rename_conversions(tree: lark.Tree[Any]) -> lark.Tree[Any]:
    """Route ``double(x)``, ``int(x)`` and ``uint(x)`` calls to Go's conversions
    (``GO_DOUBLE``, ``GO_INT``, ``GO_UINT``), in place: cel-python converts a string with
    Python's ``float()`` and ``int()``, which take ``" 1"``, ``"1_0"`` and Unicode digits,
    where cel-go's ``strconv`` refuses them, and a double past the integer range with a
    Python ``OverflowError`` where cel-go answers "integer overflow" (``_cel_numbers``).
    The bare type names (``type(x) == int``) are untouched."""
    names = {"double": GO_DOUBLE, "int": GO_INT, "uint": GO_UINT}
    for node in _walk(tree):
        if node.data == "ident_arg" and str(node.children[0]) in names:
            token = node.children[0]
            new = names[str(token)]
            node.children[0] = token.update(value=new) if isinstance(token, lark.Token) else new
    return tree


#: Grammar levels that, with a single child, only pass their child's value through.
_PASS_THROUGH = frozenset({
    "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
    "unary", "member",
})


def _collapse(tree: lark.Tree[Any]) -> lark.Tree[Any]:
    """Drop single-child pass-through levels from a cel-python AST, in place.

    CEL's grammar wraps every operand in eight precedence levels (``expr`` ... ``member``),
    so a literal costs ten interpreter visits; the interpreter dispatches on node names
    and these levels just return their child's value, so removing them gives the same
    results 1.3-2x faster (``Environment.compile`` documents AST transformation as an
    intended use). ``primary`` nodes are kept: the interpreter inspects their children.
    """
    def strip(node: lark.Tree[Any]) -> lark.Tree[Any]:
        while (node.data in _PASS_THROUGH and len(node.children) == 1
               and isinstance(node.children[0], lark.Tree)):
            node = node.children[0]
        return node

    root = strip(tree)
    stack = [root]
    while stack:
        node = stack.pop()
        node.children = [strip(c) if isinstance(c, lark.Tree) else c for c in node.children]
        stack.extend(c for c in node.children if isinstance(c, lark.Tree))
    return root


def _verdict(rule: str) -> _Verdict:
    verdict = _VERDICTS.get(rule)
    if verdict is None:
        verdict = _analyse(rule)
        with _LOCK:
            _VERDICTS[rule] = verdict
    return verdict


# --------------------------------------------------------------------------- conversion

_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
    "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
    "void", "while",
})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ESCAPABLE = re.compile(r"^[A-Za-z_.\-/][A-Za-z0-9_.\-/]*$")


def escape_property(name: str) -> str:
    """Kubernetes' CEL spelling of a property name (``x-y`` -> ``x__dash__y``)."""
    if _IDENTIFIER.match(name) and "__" not in name:
        return f"__{name}__" if name in _RESERVED else name
    if not _ESCAPABLE.match(name):
        return name
    return (name.replace("__", "__underscores__").replace(".", "__dot__")
            .replace("-", "__dash__").replace("/", "__slash__"))


def _timestamp(text: str) -> Any:
    if len(text) == 10:  # format: date
        return celtypes.TimestampType(
            datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc))
    return celtypes.TimestampType(text.upper())  # RFC 3339 allows 't' and 'z'


_STRING_FORMATS: dict[str, Callable[[str], Any]] = {
    "date-time": _timestamp,
    "datetime": _timestamp,
    "date": _timestamp,
    "duration": parse_go_duration,
    "byte": lambda s: celtypes.BytesType(base64.b64decode(s, validate=True)),
}


def to_cel(value: Any, schema: Mapping[str, Any] | None = None, *,
           resolve: Resolver | None = None) -> Any:
    """Return ``value`` (a JSON value) as the CEL value Kubernetes binds to ``self``.

    ``schema`` directs the conversion (number -> double, string formats, property-name
    escaping); without it the JSON shape alone decides. Raises ``ValueError`` for values
    CEL cannot hold (an integer outside int64).
    """
    if schema is not None and "$ref" in schema:
        schema = resolve(schema["$ref"]) if resolve is not None else None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        if schema is not None and schema.get("type") == "number":
            return celtypes.DoubleType(value)
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        fmt = schema.get("format") if schema is not None else None
        if isinstance(fmt, str) and fmt in _STRING_FORMATS:
            try:
                return _STRING_FORMATS[fmt](value)
            except (ValueError, TypeError):
                pass  # the schema validator rejects it; CEL sees the raw string
        return celtypes.StringType(value)
    if value is None:
        return None
    if isinstance(value, Mapping):
        return _object_to_cel(value, schema, resolve)
    if isinstance(value, Sequence):
        items = schema.get("items") if schema is not None else None
        sub = items if isinstance(items, Mapping) else None
        return celtypes.ListType([to_cel(v, sub, resolve=resolve) for v in value])
    raise ValueError(f"not a JSON value: {value!r} (type={type(value).__name__})")


def _object_to_cel(value: Mapping[str, Any], schema: Mapping[str, Any] | None,
                   resolve: Resolver | None) -> celtypes.MapType:
    if schema is None:
        return celtypes.MapType({
            celtypes.StringType(k): to_cel(v, None, resolve=resolve) for k, v in value.items()
        })
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    extra = schema.get("additionalProperties")
    extra = extra if isinstance(extra, Mapping) else None
    out: dict[Any, Any] = {}
    for key, item in value.items():
        if key in properties:
            out[celtypes.StringType(escape_property(key))] = to_cel(
                item, properties[key], resolve=resolve)
        else:
            out[celtypes.StringType(key)] = to_cel(item, extra, resolve=resolve)
    return celtypes.MapType(out)


# --------------------------------------------------------------------------- rule sets


@dataclass(frozen=True, repr=False)
class CompiledRules:
    """The ``x-kubernetes-validations`` of one schema node, ready to check values.

    ``supported`` rules are evaluated by :meth:`check`; ``transition`` rules (they use
    ``oldSelf``) only apply on update and are skipped; ``unsupported`` rules cannot be
    evaluated and are reported to the user.
    """

    path: str
    supported: tuple[str, ...]
    transition: tuple[str, ...]
    _static_unsupported: tuple[UnsupportedRule, ...]
    _programs: tuple[_Program, ...] = field(repr=False)
    _schema: Mapping[str, Any] | None = field(repr=False, compare=False)
    _resolve: Resolver | None = field(repr=False, compare=False)
    _cache: dict[str, bool] = field(default_factory=dict, repr=False, compare=False)
    #: the cost one evaluation of one rule may spend (Kubernetes' ``PerCallLimit``)
    cost_limit: int = field(default=PER_CALL_LIMIT, compare=False)
    #: evaluations so far that ran past ``cost_limit`` (one counter in a list: frozen)
    exceeded: list[int] = field(default_factory=lambda: [0], repr=False, compare=False)
    #: generation only: a rule that ran past ``cost_limit`` this many times in the process
    #: (:func:`too_costly`) is no longer evaluated here; ``None``: always evaluated
    give_up_after: int | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return (f"CompiledRules(path={self.path!r}, supported={len(self.supported)}, "
                f"transition={len(self.transition)}, unsupported={len(self.unsupported)})")

    @property
    def unsupported(self) -> tuple[UnsupportedRule, ...]:
        """Rules that cannot be checked, including any demoted while checking."""
        late = tuple(
            UnsupportedRule(p.rule, self.path, _DEMOTED[p.rule])
            for p in self._programs if p.rule in _DEMOTED
        )
        return self._static_unsupported + late

    def check(self, value: Any) -> bool:
        """Return True iff every supported rule holds with ``self = value``.

        A rule whose evaluation errors for this value (missing key, bad index, wrong type)
        does not hold. Results are memoised per rule set for small values, because
        Hypothesis draws the same scalars again and again.
        """
        if not self._programs:
            return True
        try:
            key = json.dumps(value)
        except (TypeError, ValueError):
            key = ""
        if key and len(key) <= _CACHEABLE_KEY_CHARS:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        result = not self.failures(value)
        if key and len(key) <= _CACHEABLE_KEY_CHARS:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = result
        return result

    def failures(self, value: Any) -> tuple[str, ...]:
        """Return the supported rules that do not hold for ``self = value``, in order."""
        return tuple(rule for rule, _ in self.outcome(value)[0])

    def outcome(self, value: Any, *, budget: int | None = None
                ) -> tuple[tuple[tuple[str, str], ...], int]:
        """Return ``((rule, why), ...)`` for the rules that do not hold for ``self =
        value`` and the CEL cost spent. ``why`` is ``""`` for a rule that is false (or
        errors), :data:`COST_EXCEEDED` for one stopped by the per-evaluation limit.

        ``budget`` is what is left of the object's cost budget (``RUNTIME_BUDGET`` for a
        whole object): once spent, the first rule past it fails with
        :data:`BUDGET_EXHAUSTED` and no further rule runs, as in apiextensions-apiserver
        ``pkg/apiserver/schema/cel/validation.go``.
        """
        try:
            cel_value = to_cel(value, self._schema, resolve=self._resolve)
        except (ValueError, TypeError, OverflowError):
            return tuple((p.rule, "") for p in self._programs if p.rule not in _DEMOTED), 0
        context = {"self": cel_value, "sets": SETS}
        failed: list[tuple[str, str]] = []
        spent = 0
        for program in self._programs:
            if program.rule in _DEMOTED or (
                    self.give_up_after is not None
                    and too_costly(program.rule, self.give_up_after)):
                continue
            left = None if budget is None else budget - spent
            limit = self.cost_limit if left is None else min(self.cost_limit, left)
            holds, used = self._holds(program, context, limit)
            spent += used
            if holds is None:
                if left is not None and left <= self.cost_limit:
                    failed.append((program.rule, BUDGET_EXHAUSTED))
                    break
                failed.append((program.rule, COST_EXCEEDED))
                self.exceeded[0] += 1
                if self.give_up_after is not None:
                    with _LOCK:
                        _COSTLY[program.rule] = _COSTLY.get(program.rule, 0) + 1
            elif not holds:
                failed.append((program.rule, ""))
        return tuple(failed), spent

    def _holds(self, program: _Program, context: dict[str, Any],
               limit: int) -> tuple[bool | None, int]:
        """Whether the rule holds (``None``: it ran out of cost) and the cost spent."""
        try:
            result, used = metered(program.runner, context, max(0, limit))
        except CostExceeded:  # the API server rejects the object: "cost budget exceeded"
            return None, limit
        except CELEvalError as exc:
            if _is_undeclared(exc):
                self._demote(program.rule, f"not available in cel-python: {_message(exc)}")
                return True, 0
            return False, 0
        except Exception as exc:  # cel-python bug or CELUnsupportedError: stop filtering
            self._demote(program.rule, f"cel-python raised {type(exc).__name__}: {exc}")
            return True, 0
        if isinstance(result, CELEvalError):
            if _is_undeclared(result):
                self._demote(program.rule, f"not available in cel-python: {_message(result)}")
                return True, used
            return False, used
        return isinstance(result, celtypes.BoolType) and bool(result), used

    def _demote(self, rule: str, reason: str) -> None:
        with _LOCK:
            if rule in _DEMOTED:
                return
            _DEMOTED[rule] = reason
        self._cache.clear()
        warnings.warn(
            f"x-kubernetes-validations rule {rule!r} at {self.path} is no longer checked: "
            f"{reason}. Generated objects may violate it.",
            UnsupportedRuleWarning, stacklevel=2,
        )


def _message(exc: CELEvalError) -> str:
    return str(exc.args[0]).split(" (in activation")[0] if exc.args else repr(exc)


def _is_undeclared(exc: CELEvalError) -> bool:
    return bool(exc.args) and str(exc.args[0]).startswith("undeclared reference")


def compile_rules(node: Mapping[str, Any], *, path: str = "self",
                  resolve: Resolver | None = None,
                  cost_limit: int = PER_CALL_LIMIT,
                  give_up_after: int | None = None) -> CompiledRules:
    """Return the node's ``x-kubernetes-validations`` sorted into supported/transition/
    unsupported, with a ``check(value)`` for the supported ones.

    ``path`` (a field path such as ``spec.topology``) is only used in reports. ``resolve``
    maps a local ``$ref`` to its schema so that ``$ref``'d properties are converted with
    their types and formats. Each rule text is parsed once per process. ``cost_limit``
    bounds one evaluation of one rule, in CEL cost units (Kubernetes' ``PerCallLimit``,
    k8s.io/apiserver/pkg/apis/cel/config.go): a value whose check would cost more is
    rejected, as the API server rejects the object ("cost budget exceeded").
    ``give_up_after`` (generation only) stops evaluating a rule, here and in every rule set
    given it, once it has run past ``cost_limit`` that many times in the process.

    Example::

        rules = compile_rules({"type": "object",
                               "x-kubernetes-validations": [{"rule": "self.min <= self.max"}]})
        rules.check({"min": 1, "max": 2})   # True

    Raises:
        SchemaLoadError: ``x-kubernetes-validations`` is not a list of ``{rule: <string>}``.

    .. versionadded:: 0.1.0
    """
    raw = node.get("x-kubernetes-validations", ())
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise SchemaLoadError(
            f"x-kubernetes-validations at {path} must be a list, got {type(raw).__name__}",
            source="<schema>", hint="write it as a list: [{rule: \"self.a <= self.b\"}]")
    supported: list[str] = []
    transition: list[str] = []
    unsupported: list[UnsupportedRule] = []
    programs: list[_Program] = []
    for i, entry in enumerate(raw):
        rule = entry.get("rule") if isinstance(entry, Mapping) else None
        if not isinstance(rule, str):
            raise SchemaLoadError(
                f"x-kubernetes-validations[{i}] at {path} must be a mapping with a string "
                f"'rule', got {entry!r}",
                source="<schema>",
                hint="write each entry as {rule: \"<CEL expression>\", message: \"...\"}")
        verdict = _verdict(rule)
        if verdict.program is None:
            unsupported.append(UnsupportedRule(rule, path, verdict.reason))
        elif verdict.transition:
            transition.append(rule)
        elif rule in _DEMOTED:
            unsupported.append(UnsupportedRule(rule, path, _DEMOTED[rule]))
        else:
            supported.append(rule)
            programs.append(verdict.program)
    return CompiledRules(
        path=path, supported=tuple(supported), transition=tuple(transition),
        _static_unsupported=tuple(unsupported), _programs=tuple(programs),
        _schema=node, _resolve=resolve, cost_limit=cost_limit, give_up_after=give_up_after,
    )


# --------------------------------------------------------------------------- the CRD check

_STRUCTURAL = ("properties", "additionalProperties", "items", "allOf", "anyOf", "oneOf",
               "not")
_MAX_NODES = 200_000  # a schema walk never visits more (shared $refs expand as a tree)


def _mentions_rules(node: Any) -> bool:
    stack = [node]
    seen = 0
    while stack and seen < _MAX_NODES:
        item = stack.pop()
        seen += 1
        if isinstance(item, Mapping):
            if "x-kubernetes-validations" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _rendered(schema: Any, tokens: tuple[str, ...]) -> str:
    from compatfuzz.errors import _pointer_to_path
    from compatfuzz.schema._keywords import escape

    return _pointer_to_path(schema.pointer + "".join("/" + escape(t) for t in tokens))


def _caret(rule: str, reason: str) -> str:
    match = re.search(r"line (\d+), column (\d+)", reason)
    if not match:
        return ""
    lines = rule.splitlines() or [""]
    line = lines[min(int(match[1]), len(lines)) - 1]
    return f"\n    {line}\n    {' ' * (int(match[2]) - 1)}^"


class CostRefusal(UnsupportedSchema):
    """An ``UnsupportedSchema`` raised for an estimated cost, not for a syntax error:
    generation can go on without it (``compatfuzz sample`` warns)."""


def _check_rules(schema: Any) -> None:
    """Raise :class:`UnsupportedSchema` if the API server would refuse ``schema`` (a
    ``Schema``) for its ``x-kubernetes-validations``: a rule that does not parse, a rule
    (or ``messageExpression``) whose estimated cost times how often it can run passes
    ``STATIC_RULE_LIMIT``, or rules whose costs add up past ``STATIC_CRD_LIMIT``. The
    message quotes the server's own (``estimated rule cost exceeds budget by factor of
    ...``) and names the file, the JSON path of the rule, the estimate and the fix.

    Mirrors k8s.io/apiextensions-apiserver v0.37.2 ``pkg/apis/apiextensions/validation/
    validation.go`` (``ValidateCustomResourceDefinitionOpenAPISchema``: rules under
    ``properties``, ``items`` and ``additionalProperties`` only, junctors are not
    compiled; ``getExpressionCost``; the per-CRD ``TotalCost``) and cel_validation.go
    (``extractMaxElements``, ``childContext``); the estimate is
    :func:`compatfuzz.strategies._cel_cost.rule_cost`, equal to the server's ``MaxCost``.
    """
    from compatfuzz.strategies._cel_check import check as type_check
    from compatfuzz.strategies._cel_cost import STATIC_CRD_LIMIT, STATIC_RULE_LIMIT
    from compatfuzz.strategies._cel_cost_crd import CostVerdict, crd_rule_costs

    if not _mentions_rules(schema.root):
        return
    resolve = getattr(schema, "resolve", None)
    costs = crd_rule_costs(schema.root, resolve=resolve, max_nodes=_MAX_NODES)
    verdict = CostVerdict(costs)  # the server's judgement; here said with file and path

    def path_of(rc: Any) -> str:
        return _rendered(schema, (*rc.tokens, "x-kubernetes-validations", str(rc.index),
                                  rc.key))

    for rc in costs:
        checked = _verdict(rc.text) if rc.key == "rule" else None
        if checked is not None and checked.invalid and type_check(
                rc.text, rc.node, resolve=resolve, root=rc.root).ast is None:
            raise UnsupportedSchema(
                f"{schema.source} at {path_of(rc)}: the "
                f"x-kubernetes-validations rule does not compile ({checked.reason}), "
                f"so the API server refuses this CRD: {rc.text}{_caret(rc.text, checked.reason)}"
                "\n  fix: correct the rule's syntax (CEL: "
                "https://kubernetes.io/docs/reference/using-api/cel/)")
        detail = verdict.over.get(id(rc))
        if detail is not None:
            times = rc.cost // rc.raw if rc.raw else 1
            runs = "" if times == 1 else (
                f" ({rc.raw:,} per evaluation x up to {times:,} evaluations)")
            raise CostRefusal(
                f"{schema.source} at {path_of(rc)}: Forbidden: {detail}, so Kubernetes "
                f"refuses this CRD; the estimate is {rc.cost:,}{runs} against a limit of "
                f"{STATIC_RULE_LIMIT:,}: {_short(rc.text)}\n  fix: add maxItems, "
                "maxProperties and maxLength to the lists, maps and strings the rule reads "
                "(and to the lists it sits under), or simplify the rule")
    if verdict.total_detail is not None:
        top = ", ".join(f"{path_of(rc)} ({rc.cost:,})" for rc in verdict.expensive)
        raise CostRefusal(
            f"{schema.source}: Forbidden: {verdict.total_detail}"
            f", so Kubernetes refuses this CRD (estimated total {verdict.total:,}, limit "
            f"{STATIC_CRD_LIMIT:,}); contributed to estimated rule cost total exceeding cost "
            f"limit for entire OpenAPIv3 schema: {top}\n  fix: add maxItems, maxProperties "
            "and maxLength where lists, maps and strings are declared, or simplify the rules")


def _short(rule: str) -> str:
    return rule if len(rule) <= 200 else rule[:197] + "..."


_REFUSALS: dict[int, tuple[Any, Exception | None]] = {}


def check_rules(schema: Any) -> None:
    """Raise :class:`~compatfuzz.errors.UnsupportedSchema` if the API server would refuse
    ``schema`` for its CEL rules (see ``_check_rules``); the verdict is kept per schema."""
    hit = _REFUSALS.get(id(schema))
    if hit is None or hit[0] is not schema:
        try:
            _check_rules(schema)
            hit = (schema, None)
        except UnsupportedSchema as exc:
            hit = (schema, exc)
        with _LOCK:
            if len(_REFUSALS) >= 256:
                _REFUSALS.clear()
            _REFUSALS[id(schema)] = hit
    if hit[1] is not None:
        if isinstance(hit[1], CostRefusal):
            raise CostRefusal(str(hit[1]))
        raise UnsupportedSchema(str(hit[1]))


# --------------------------------------------------------------------------- judging one rule


def transition_holds(rule: str, value: Any, old: Any, schema: Mapping[str, Any] | None = None,
                     *, resolve: Resolver | None = None,
                     cost_limit: int = PER_CALL_LIMIT) -> bool | None:
    """Whether the transition rule ``rule`` holds on an update from ``old`` to ``value``
    (``None``: it cannot be evaluated here).

    apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go``
    (``validateExpressions``) binds ``self`` to the new value and ``oldSelf`` to the old
    object's value at the rule's node, both converted by the node's schema, and runs a
    rule using ``oldSelf`` only when there is an old value (on update); an evaluation
    error or a cost past ``cost_limit`` rejects the update, as there.
    """
    verdict = _verdict(rule)
    if verdict.program is None or rule in _DEMOTED:
        return None
    try:
        context = {"self": to_cel(value, schema, resolve=resolve),
                   "oldSelf": to_cel(old, schema, resolve=resolve), "sets": SETS}
        result, _ = metered(verdict.program.runner, context, cost_limit)
    except CostExceeded:
        return False
    except CELEvalError as exc:
        return None if _is_undeclared(exc) else False
    except (ValueError, TypeError, OverflowError):
        return False
    except Exception:  # a cel-python crash: we cannot tell
        return None
    if isinstance(result, CELEvalError):
        return None if _is_undeclared(result) else False
    return isinstance(result, celtypes.BoolType) and bool(result)


def _self_field(arg: Any) -> str | None:
    """``f`` when ``arg`` is exactly ``self.f`` (after :func:`_collapse`), else ``None``."""
    if not isinstance(arg, lark.Tree) or arg.data != "member_dot" or len(arg.children) != 2:
        return None
    primary = arg.children[0]
    if (isinstance(primary, lark.Tree) and primary.data == "primary" and primary.children
            and isinstance(primary.children[0], lark.Tree)
            and primary.children[0].data == "ident"
            and str(primary.children[0].children[0]) == "self"):
        return str(arg.children[1])
    return None


def holds_without(rule: str, absent: Callable[[str], bool]) -> tuple[bool, tuple[str, ...]]:
    """Whether ``rule`` holds for *every* value of ``self`` that lacks the fields for which
    ``absent(name)`` is true (``name`` as the rule spells it, escaped), and which of those
    fields the proof used.

    Why: a rule added over a field that the same revision adds (``!has(self.sa) || ...``)
    cannot reject an object stored before, which has no such field. The proof is a partial
    evaluation: ``has(self.f)`` of an absent field is ``false``, every other reading of
    ``self`` (``has`` of a present field included) is an unknown, bound as a CEL error;
    CEL's commutative ``||`` and ``&&`` let an error through unless the other operand
    decides the result (cel-go ``README.md``, "Partial State"), and ``?:`` on an error is
    an error, so ``true`` means the result did not depend on anything unknown. Transition
    rules are not judged.
    """
    verdict = _verdict(rule)
    if verdict.program is None or verdict.transition:
        return False, ()
    env = _environment()
    try:
        tree = _collapse(_rename_min(env.compile(rule)))
        false_node = _collapse(env.compile("false"))
        unknown_node = _collapse(env.compile("self"))
    except Exception:  # it parsed above; a lark surprise means "not proven"
        return False, ()
    # the leaves of ``primary(literal false)`` and ``primary(ident self)``
    false_leaf = false_node.children[0] if false_node.data == "primary" else false_node
    unknown_leaf = unknown_node.children[0] if unknown_node.data == "primary" else unknown_node
    used: list[str] = []
    for node in list(_walk(tree)):
        if node.data != "ident_arg" or str(node.children[0]) != "has":
            continue
        args = node.children[1] if len(node.children) > 1 else None
        arg = args.children[0] if isinstance(args, lark.Tree) and args.children else None
        name = _self_field(arg)
        leaf = false_leaf if name is not None and absent(name) else unknown_leaf
        if leaf is false_leaf and name not in used:
            used.append(str(name))
        node.data, node.children = leaf.data, list(leaf.children)
    if not used:
        return False, ()
    try:
        program = env.program(tree, functions=_CHARGED)
        unknown = CELEvalError("unknown: any value a stored object may hold")
        result, _ = metered(program, {"self": unknown, "sets": SETS}, PER_CALL_LIMIT)
    except Exception:  # an error or a crash: the rule's result depends on the unknown
        return False, ()
    holds = isinstance(result, celtypes.BoolType) and bool(result)
    return holds, tuple(used) if holds else ()
