"""A small, immutable AST for CEL rules, read from cel-python's parse tree.

Why: recognising the shapes of ``x-kubernetes-validations`` rules (``_cel_shapes``) means
matching on the expression's structure. cel-python's lark tree wraps every operand in eight
precedence levels and spells operators as child rule names (``relation_lt``), which makes
patterns unreadable; this module folds it into tuples that read like the rule:

* ``("lit", value)``: a literal (str, int, float, bool, bytes, ``None`` for null);
* ``("ident", name)``; ``("sel", base, field)`` (``self.x``); ``("idx", base, key)``;
* ``("has", sel)``; ``("call", name, target, args)`` (``target`` is ``None`` for a global
  call such as ``size(x)``); ``("macro", name, target, var, body)`` for ``all``,
  ``exists``, ``exists_one``, ``map`` and ``filter``;
* ``("list", items)``; ``("map", pairs)``;
* ``("not", x)``, ``("neg", x)``, ``("and", a, b)``, ``("or", a, b)``,
  ``("cond", c, t, f)``, ``("rel", op, a, b)`` with ``op`` one of ``< <= > >= == != in``,
  ``("arith", op, a, b)`` with ``op`` one of ``+ - * / %``.

Field names stay as the rule spells them (Kubernetes' escaped form, ``x__dash__y``);
``_cel_shapes`` unescapes them against the schema. Literals are decoded by cel-python
itself, so escapes and raw strings mean what they mean to the API server.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import lark

__all__ = ["Node", "parse", "unparse"]

Node = tuple[Any, ...]

_REL = {"relation_lt": "<", "relation_le": "<=", "relation_gt": ">", "relation_ge": ">=",
        "relation_eq": "==", "relation_ne": "!=", "relation_in": "in"}
_ARITH = {"addition_add": "+", "addition_sub": "-", "multiplication_mul": "*",
          "multiplication_div": "/", "multiplication_mod": "%"}
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})


class Unsupported(ValueError):
    """The tree holds a construct this AST does not model (a message literal)."""


def _kids(tree: lark.Tree[Any]) -> list[Any]:
    return [c for c in tree.children if c is not None]


@lru_cache(maxsize=4096)
def _literal(text: str) -> Any:
    from celpy import celtypes

    from compatfuzz.strategies._cel import _environment

    env = _environment()
    value = env.program(env.compile(text)).evaluate({})
    if value is None or isinstance(value, celtypes.BoolType):
        return None if value is None else bool(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.BytesType):
        return bytes(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    raise Unsupported(f"literal {text}")


def _exprs(tree: Any) -> tuple[Node, ...]:
    if not isinstance(tree, lark.Tree):
        return ()
    return tuple(_node(c) for c in _kids(tree))


def _node(tree: Any) -> Node:
    if not isinstance(tree, lark.Tree):
        raise Unsupported(f"token {tree!r}")
    name = tree.data
    kids = _kids(tree)
    if name == "expr":
        if len(kids) == 3:
            return ("cond", _node(kids[0]), _node(kids[1]), _node(kids[2]))
        return _node(kids[0])
    if name in ("conditionalor", "conditionaland"):
        if len(kids) == 2:
            return ("or" if name == "conditionalor" else "and", _node(kids[0]), _node(kids[1]))
        return _node(kids[0])
    if name in ("relation", "addition", "multiplication"):
        if len(kids) == 2:
            op_tree = kids[0]
            table = _REL if name == "relation" else _ARITH
            left = _kids(op_tree)[0]
            if name == "relation":
                return ("rel", table[op_tree.data], _node(left), _node(kids[1]))
            return ("arith", table[op_tree.data], _node(left), _node(kids[1]))
        return _node(kids[0])
    if name == "unary":
        if len(kids) == 2:
            inner = _node(kids[1])
            return ("not", inner) if kids[0].data == "unary_not" else ("neg", inner)
        return _node(kids[0])
    if name in ("member", "primary"):
        return _node(kids[0])
    if name == "member_dot":
        return ("sel", _node(kids[0]), str(kids[1]))
    if name == "member_dot_arg":
        target, method = _node(kids[0]), str(kids[1])
        args = _exprs(kids[2]) if len(kids) > 2 else ()
        if method in _MACROS and len(args) == 2 and args[0][0] == "ident":
            return ("macro", method, target, args[0][1], args[1])
        return ("call", method, target, args)
    if name == "member_index":
        return ("idx", _node(kids[0]), _node(kids[1]))
    if name == "ident_arg":
        fn = str(kids[0])
        args = _exprs(kids[1]) if len(kids) > 1 else ()
        if fn == "has" and len(args) == 1 and args[0][0] == "sel":
            return ("has", args[0])
        return ("call", fn, None, args)
    if name == "dot_ident_arg":
        return ("call", str(kids[0]), None, _exprs(kids[1]) if len(kids) > 1 else ())
    if name in ("ident", "dot_ident"):
        return ("ident", str(kids[0]))
    if name == "paren_expr":
        return _node(kids[0])
    if name == "literal":
        return ("lit", _literal(str(kids[0])))
    if name == "list_lit":
        return ("list", _exprs(kids[0]) if kids else ())
    if name == "map_lit":
        flat = _exprs(kids[0]) if kids else ()
        return ("map", tuple(zip(flat[::2], flat[1::2], strict=True)))
    raise Unsupported(name)


@lru_cache(maxsize=4096)
def parse(rule: str) -> Node | None:
    """The AST of ``rule``, or ``None`` when cel-python cannot parse it or it uses a
    construct not modelled here (message literals)."""
    from compatfuzz.strategies._cel import _environment

    try:
        return _node(_environment().compile(rule))
    except Exception:  # a parse error or an unmodelled construct: no shape to recognise
        return None


def unparse(node: Node) -> str:
    """CEL source for ``node`` (fully parenthesised): rules pushed down to a list's items
    or a map's values are written back as text, since the checker compiles text."""
    import json

    kind = node[0]
    if kind == "lit":
        value = node[1]
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return json.dumps(value)
        if isinstance(value, bytes):
            return "b" + json.dumps(value.decode("latin-1"))
        return repr(value)
    if kind == "ident":
        return str(node[1])
    if kind == "sel":
        return f"{unparse(node[1])}.{node[2]}"
    if kind == "idx":
        return f"{unparse(node[1])}[{unparse(node[2])}]"
    if kind == "has":
        return f"has({unparse(node[1])})"
    if kind == "call":
        args = ", ".join(unparse(a) for a in node[3])
        return f"{unparse(node[2])}.{node[1]}({args})" if node[2] is not None else (
            f"{node[1]}({args})")
    if kind == "macro":
        return f"{unparse(node[2])}.{node[1]}({node[3]}, {unparse(node[4])})"
    if kind == "list":
        return "[" + ", ".join(unparse(a) for a in node[1]) + "]"
    if kind == "map":
        return "{" + ", ".join(f"{unparse(k)}: {unparse(v)}" for k, v in node[1]) + "}"
    if kind == "not":
        return f"!({unparse(node[1])})"
    if kind == "neg":
        return f"-({unparse(node[1])})"
    if kind in ("and", "or"):
        op = "&&" if kind == "and" else "||"
        return f"({unparse(node[1])}) {op} ({unparse(node[2])})"
    if kind == "cond":
        return f"({unparse(node[1])}) ? ({unparse(node[2])}) : ({unparse(node[3])})"
    if kind in ("rel", "arith"):
        return f"({unparse(node[2])}) {node[1]} ({unparse(node[3])})"
    raise Unsupported(kind)
