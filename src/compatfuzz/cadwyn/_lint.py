"""Static checks of a bundle's ``VersionChange`` code: bugs no example needs to show.

Run once per version before any example (the ``migrations[<version>]`` unit of a Cadwyn
API, :func:`check_version`), each finding names the ``VersionChange``, the function, the
file and the line:

* **shadowed**: two ``def`` statements of one name in one ``VersionChange``. A class body
  keeps one attribute per name, and Cadwyn collects migrations from the class's attributes
  (``VersionChange.__init_subclass__`` reads ``cls.__dict__``: Cadwyn 9's
  ``cadwyn/structure/versions/_changes.py``), so the first one never runs; a run then says
  "no migration touched X" without saying why.
* **wrong-direction**: a migration reads a body key the body it receives cannot have but
  the body on the other side of its version has. Request migrations
  (``convert_request_to_next_version_for``) receive the older version's body and make the
  newer one; response migrations the reverse. Reading ``body["email"]`` in a response
  migration of a change that renamed ``email`` to ``email_address`` is that mistake.
* **unknown-field**: a migration reads a body key no version of the schema has (a typo).
* **one-direction** (given the app): a field renamed by ``had(name=...)`` needs a request
  migration for each route that takes the schema (or a subclass) and a response migration
  for each that returns it, in the same ``VersionChange``; Cadwyn renames the field in the
  old schema but moves no data. A route left without one (a migration written for one
  direction, or a path-based one registered on another route) loses the field for old
  clients there.
* **no-route** (given the app): a path-based migration whose path and methods match no
  route of the app (a typo, ``"/user"`` for ``"/users"``). Cadwyn raises
  ``RouteByPathConverterDoesNotApplyToAnythingError`` for it on the app's first request,
  every request then failing.

Only reads that raise on a missing key count (``body["x"]``, ``body.pop("x")`` without a
default, ``del body["x"]``), on the migration's own parameter (``request.body`` /
``response.body``, or a name assigned it) and the top level of the body: ``.get`` and
``"x" in body`` guard themselves, and a route may add keys outside the schema.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import inspect
import os
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from compatfuzz.cadwyn._bundle import CadwynAPI, Direction, body_keys, sides
from compatfuzz.errors import CompatfuzzError

__all__ = ["Finding", "MigrationCodeError", "check_version", "findings"]

Check = Literal["shadowed", "wrong-direction", "unknown-field", "one-direction", "no-route"]


@dataclass(frozen=True)
class Finding:
    """One static finding about a ``VersionChange``'s code."""

    check: Check
    version: str
    version_change: str
    function: str
    file: str
    line: int
    message: str
    hint: str

    def __str__(self) -> str:
        """``file:line: Change.function (version V): message`` and the fix; the file
        relative to the working directory when it lies under it."""
        file = self.file
        with contextlib.suppress(ValueError):
            relative = os.path.relpath(file)
            if not relative.startswith(".."):
                file = relative
        return (f"{file}:{self.line}: {self.version_change}.{self.function} "
                f"(version {self.version}): {self.message}\n    fix: {self.hint}")

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "version": self.version,
                "version_change": self.version_change, "function": self.function,
                "file": self.file, "line": self.line, "message": self.message,
                "hint": self.hint}


class MigrationCodeError(CompatfuzzError, AssertionError):
    """A version's ``VersionChange`` code has static findings (``findings``): the failure of
    its ``migrations[<version>]`` unit."""

    def __init__(self, found: list[Finding]) -> None:
        self.findings = tuple(found)
        version = found[0].version if found else "?"
        lines = [f"{len(found)} finding{'s' if len(found) != 1 else ''} in the "
                 f"VersionChange code of version {version}, before any example:"]
        lines.extend(f"  {f}" for f in found)
        super().__init__("\n".join(lines))


def _class_tree(change: type[Any]) -> tuple[ast.ClassDef, str, int] | None:
    """The ``class`` statement of ``change``, its file and its first line (``None``: no
    source to read, e.g. a class made at run time)."""
    try:
        lines, start = inspect.getsourcelines(change)
        file = inspect.getsourcefile(change) or "<unknown>"
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    node = tree.body[0] if tree.body else None
    return (node, file, start) if isinstance(node, ast.ClassDef) else None


def _is_migration(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a ``def`` carries one of Cadwyn's migration decorators."""
    for deco in node.decorator_list:
        call = deco.func if isinstance(deco, ast.Call) else deco
        name = call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "")
        if name.startswith(("convert_request_to_next_version_for",
                            "convert_response_to_previous_version_for")):
            return True
    return False


def _shadowed(version: str, change: type[Any]) -> Iterator[Finding]:
    found = _class_tree(change)
    if found is None:
        return
    node, file, start = found
    Def = ast.FunctionDef | ast.AsyncFunctionDef
    Path = tuple[tuple[int, int], ...]  # the if-branches a def sits in
    defs: dict[str, list[tuple[Def, Path]]] = {}

    def walk(body: list[ast.stmt], path: Path) -> None:
        for item in body:
            if isinstance(item, ast.If):  # the two branches are alternatives
                for branch, stmts in enumerate((item.body, item.orelse)):
                    walk(stmts, (*path, (id(item), branch)))
            elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(item.name, []).append((item, path))

    def first_line(item: Def) -> int:
        """The line ``co_firstlineno`` gives: the first decorator's, or the def's."""
        return start + min([d.lineno for d in item.decorator_list] + [item.lineno]) - 1

    walk(node.body, ())
    for name, found_defs in defs.items():
        if len(found_defs) < 2 or not any(_is_migration(d) for d, _ in found_defs):
            continue
        value = vars(change).get(name)
        fn = getattr(value, "transformer", value)
        code = getattr(inspect.unwrap(fn) if callable(fn) else fn, "__code__", None)
        kept = [(d, p) for d, p in found_defs
                if code is not None and first_line(d) == code.co_firstlineno]
        if not kept:
            continue
        last, last_path = kept[0]
        for item, path in found_defs:
            # an earlier def that surely ran whenever the kept one did: a def in a branch
            # not taken shadows nothing
            if item.lineno < last.lineno and last_path[:len(path)] == path:
                yield Finding(
                    "shadowed", version, change.__name__, name, file,
                    start + item.lineno - 1,
                    f"this migration is replaced by the `def {name}` at line "
                    f"{start + last.lineno - 1}: a class keeps one attribute per name, so "
                    "Cadwyn registers only the last and this one never runs",
                    "give the functions different names (all then run, in the order they "
                    "are written)")


def _reads(fn: Any) -> Iterator[tuple[str, int]]:
    """``(key, line)`` for each top-level body key ``fn`` reads in a way that raises when
    the key is missing (module docstring)."""
    try:
        lines, start = inspect.getsourcelines(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return
    func = tree.body[0] if tree.body else None
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.args.args:
        return
    param = func.args.args[0].arg

    def is_body_attr(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "body"
                and isinstance(node.value, ast.Name) and node.value.id == param)

    # ``body = request.body`` (Cadwyn's tutorial writes its migrations so)
    aliases = {target.id for node in ast.walk(func) if isinstance(node, ast.Assign)
               and is_body_attr(node.value) for target in node.targets
               if isinstance(target, ast.Name)}

    def is_body(node: ast.AST) -> bool:
        return is_body_attr(node) or (isinstance(node, ast.Name) and node.id in aliases)

    def key_of(node: ast.AST) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
            else None

    for node in ast.walk(func):
        if isinstance(node, ast.Subscript) and is_body(node.value) and \
                isinstance(node.ctx, (ast.Load, ast.Del)):
            key = key_of(node.slice)
            if key is not None:
                yield key, start + node.lineno - 1
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "pop" and is_body(node.func.value)
              and len(node.args) == 1 and not node.keywords):
            key = key_of(node.args[0])
            if key is not None:
                yield key, start + node.lineno - 1


def _field_findings(api: CadwynAPI, version: str, older: str, change: type[Any]
                    ) -> Iterator[Finding]:
    tables: tuple[tuple[Direction, Any], ...] = (
        ("request", change.alter_request_by_schema_instructions),
        ("response", change.alter_response_by_schema_instructions))
    for direction, table in tables:
        for schema, instructions in table.items():
            try:
                shapes = {v: body_keys(api.model(schema, v)) for v in api.versions}
            except (KeyError, TypeError):
                continue  # not a model Cadwyn versions (a path-based migration's key)
            every = set().union(body_keys(schema), *shapes.values())
            gets_v, other_v = sides(direction, older, version)
            gets, other = shapes[gets_v], shapes[other_v]
            for instruction in instructions:
                fn = inspect.unwrap(getattr(instruction, "transformer", instruction))
                name = getattr(fn, "__name__", repr(fn))
                file = inspect.getsourcefile(fn) or "<unknown>"
                for key, line in _reads(fn):
                    if key in gets:
                        continue
                    if key in other:
                        yield Finding(
                            "wrong-direction", version, change.__name__, name, file, line,
                            f"reads `{key}`, which the {gets_v} {schema.__name__} body a "
                            f"{direction} migration receives does not have ({other_v}'s "
                            "has it): does it run in the wrong direction?",
                            f"a {direction} migration of version {version} turns a "
                            f"{gets_v} body into a {other_v} one"
                            + ("; read the old names and write the new ones" if direction
                               == "request" else "; read the new names and write the old "
                                                 "ones"))
                    elif key not in every:
                        close = difflib.get_close_matches(key, sorted(gets), n=1)
                        yield Finding(
                            "unknown-field", version, change.__name__, name, file, line,
                            f"reads `{key}`, which no version of {schema.__name__} has",
                            (f"did you mean `{close[0]}`? " if close else "")
                            + f"the {gets_v} body it receives has: "
                            + ", ".join(f"`{k}`" for k in sorted(gets)))


def _renames(change: type[Any]) -> Iterator[tuple[type[Any], str, str]]:
    """``(schema, HEAD name, old name)`` per ``field(...).had(name=...)`` of ``change``."""
    for instruction in change.alter_schema_instructions:
        old = getattr(instruction, "new_name", None)
        name = getattr(instruction, "name", None)
        model = getattr(instruction, "schema", None)
        if isinstance(old, str) and isinstance(name, str) and old != name and \
                isinstance(model, type):
            yield model, name, old


def _migrates(change: type[Any], direction: Direction, route: Any, model: type[Any]) -> bool:
    """Whether ``change`` has a ``direction`` migration that runs for ``route`` and its
    ``model``: one keyed on the model, or a path-based one on the route's path and method."""
    by_schema = (change.alter_request_by_schema_instructions if direction == "request"
                 else change.alter_response_by_schema_instructions)
    if model in by_schema:
        return True
    by_path = getattr(change, f"alter_{direction}_by_path_instructions", None) or {}
    return any(set(getattr(i, "methods", ())) & set(route.methods)
               for i in by_path.get(route.path, ()))


def _one_direction(api: CadwynAPI, version: str, change: type[Any]) -> Iterator[Finding]:
    if not api.routes:
        return  # the bundle alone cannot tell which routes take or return a schema
    try:
        _, start = inspect.getsourcelines(change)
        file = inspect.getsourcefile(change) or "<unknown>"
    except (OSError, TypeError):
        file, start = "<unknown>", 0
    for schema, name, old in _renames(change):
        for route in api.routes:
            for direction, model in (("request", route.body), ("response", route.response)):
                if model is None or not issubclass(model, schema):
                    continue
                if _migrates(change, direction, route, model):  # type: ignore[arg-type]
                    continue
                moves = ("an old client's `{old}` up to `{name}`" if direction == "request"
                         else "`{name}` back down to `{old}`").format(old=old, name=name)
                yield Finding(
                    "one-direction", version, change.__name__,
                    "instructions_to_migrate_to_previous_version", file, start,
                    f"renames {schema.__name__}.{name} (`{old}` before {version}), but no "
                    f"{direction} migration of this change moves {moves} for "
                    f"{'/'.join(sorted(route.methods))} {route.path} ({route.name}), which "
                    f"{'takes' if direction == 'request' else 'returns'} "
                    f"{model.__name__}: Cadwyn renames the field in the old schema and "
                    "moves no data, so old clients lose it there",
                    f"add a {_DECORATOR[direction]}({model.__name__}) migration to "
                    f"{change.__name__} (or a path-based one for {route.path})")


_DECORATOR = {"request": "convert_request_to_next_version_for",
              "response": "convert_response_to_previous_version_for"}


def _no_route(api: CadwynAPI, version: str, change: type[Any]) -> Iterator[Finding]:
    if not api.routes:
        return
    for direction in ("request", "response"):
        table = getattr(change, f"alter_{direction}_by_path_instructions", None) or {}
        for path, instructions in table.items():
            for instruction in instructions:
                methods = set(getattr(instruction, "methods", ()))
                if any(r.path == path and methods & set(r.methods) for r in api.routes):
                    continue
                fn = inspect.unwrap(getattr(instruction, "transformer", instruction))
                try:
                    _, line = inspect.getsourcelines(fn)
                    file = inspect.getsourcefile(fn) or "<unknown>"
                except (OSError, TypeError):
                    file, line = "<unknown>", 0
                close = difflib.get_close_matches(path, sorted({r.path for r in api.routes}),
                                                  n=1)
                shown = "/".join(sorted(methods))
                yield Finding(
                    "no-route", version, change.__name__, getattr(fn, "__name__", "?"), file,
                    line, f"is a {direction} migration for {shown} {path}, which no route of "
                    "the app serves: Cadwyn raises RouteByPathConverterDoesNotApplyTo"
                    "AnythingError on the first request, and every request then fails",
                    (f"did you mean {close[0]!r}? " if close else "")
                    + "the app's routes: " + ", ".join(
                        f"{'/'.join(sorted(r.methods))} {r.path}" for r in api.routes))


def check_version(api: CadwynAPI, version: str) -> list[Finding]:
    """The findings about the ``VersionChange`` classes of ``version`` (one of
    ``api.versions`` other than the oldest, which has none)."""
    out: list[Finding] = []
    index = api.versions.index(version)
    if index == 0:
        return out
    older = api.versions[index - 1]
    for value in api.bundle.versions:
        if str(value.value) != version:
            continue
        for change in value.changes:
            out.extend(_shadowed(version, change))
            out.extend(_field_findings(api, version, older, change))
            out.extend(_one_direction(api, version, change))
            out.extend(_no_route(api, version, change))
    return out


def findings(api: CadwynAPI) -> list[Finding]:
    """Every version's findings, oldest version first."""
    return [f for version in api.versions for f in check_version(api, version)]
