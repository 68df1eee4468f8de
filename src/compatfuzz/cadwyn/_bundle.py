"""A Cadwyn ``VersionBundle`` seen as a compatfuzz API family: versions, schemas, converters.

Cadwyn (https://docs.cadwyn.dev) keeps one HEAD version of each schema and derives the older
ones from ``VersionChange`` classes; a request from an old client is migrated *up* to HEAD by
the bundle's ``convert_request_to_next_version_for`` migrations, and a HEAD response *down*
to the client's version by its ``convert_response_to_previous_version_for`` migrations.

:class:`CadwynAPI` exposes exactly that, as plain callables over JSON objects, so that the
pydantic API family can treat it as per-version models plus converters:

* ``versions``: the bundle's version values, oldest first (:data:`HEAD` is the newest shape);
* ``model(schema, version)``: the schema as Cadwyn generates it for that version
  (``cadwyn.generate_versioned_models``, public);
* ``request_up(schema, body, from_version)`` / ``response_down(schema, body, to_version)``.

Cadwyn's only public entry to its migrations is ``migrate_response_body`` (responses only,
all changes at once); to know *which* ``VersionChange`` and which migration function touched
a field, the two converters here step through the same loops as
``VersionBundle._migrate_request`` / ``_migrate_response`` (cadwyn/structure/versions.py):
versions newer than the client's, oldest first for requests and newest first for responses,
and within a version each ``VersionChange`` in order, calling its public
``alter_request_by_schema_instructions[schema]`` / ``alter_response_by_schema_instructions``
instructions with Cadwyn's own ``RequestInfo`` / ``ResponseInfo``. The bodies are what a
route sees: a request is the old model's ``model_dump(by_alias=True, exclude_unset=True)``
(``_convert_endpoint_kwargs_to_version``), a response the HEAD model's
``model_dump(by_alias=True)`` (``_prepare_response_content``).

Given the Cadwyn app rather than its bundle, :class:`CadwynAPI` also reads the app's HEAD
routes (:class:`Route`: path, methods, request body model, response model): a schema's role
comes from the routes that take or return it, and the path-based migrations
(``convert_request_to_next_version_for("/path", ["POST"])``) of a route run for its bodies,
after the schema-based ones of the same ``VersionChange``, as Cadwyn 9 runs them
(``cadwyn/structure/versions/_requests.py`` and ``_responses.py``: schema migrations, then
``_route_to_request_migration_mapping[id(head_route)]``).  Cadwyn 8's
``cadwyn/structure/versions.py`` keeps the same loops in ``VersionBundle``.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from compatfuzz.errors import CompatfuzzError, ConverterError, InvalidArgument

#: The version label of the newest shape: the schema classes the business logic uses.
HEAD = "head"

Direction = Literal["request", "response"]
_MISSING = object()


def _require_cadwyn() -> Any:
    try:
        return importlib.import_module("cadwyn")
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise CompatfuzzError(
            "the Cadwyn API family needs cadwyn: pip install 'compatfuzz[cadwyn]'"
        ) from exc


@dataclass(frozen=True)
class Step:
    """One migration function that ran: which ``VersionChange`` (of which version) and what
    the body was before and after it (deep copies)."""

    version: str
    version_change: str
    migration: str
    before: Any
    after: Any

    def touched(self, key: str) -> bool:
        """Whether this step added, removed or changed the top-level ``key``."""
        before = self.before.get(key, _MISSING) if isinstance(self.before, dict) else _MISSING
        after = self.after.get(key, _MISSING) if isinstance(self.after, dict) else _MISSING
        return before is not after and before != after

    def __str__(self) -> str:
        return f"{self.version_change}.{self.migration} (version {self.version})"


@dataclass(frozen=True)
class Instruction:
    """A schema or enum instruction of a ``VersionChange``, rendered as the user wrote it.

    ``renamed`` is ``(newer name, older name)`` for ``field(newer).had(name=older)``: what
    ``compatfuzz diff`` follows to tell a renamed field from a removed one.
    """

    version: str
    version_change: str
    text: str
    fields: frozenset[str]
    enum: type[Any] | None = None
    renamed: tuple[str, str] | None = None

    def __str__(self) -> str:
        return f"{self.version_change}: {self.text} (version {self.version})"


class MigrationFailure(ConverterError, AssertionError):
    """A Cadwyn migration raised, or its result is not valid in the target version.

    ``field`` is the top-level key at fault (or ``None``), ``steps`` the migrations that ran,
    ``blamed_steps`` those that touched ``field`` and ``blamed_instructions`` the schema
    instructions that changed it; the message names them.
    """

    def __init__(self, message: str, *, direction: Direction, schema: str, version: str,
                 field: str | None = None, steps: tuple[Step, ...] = (),
                 blamed_steps: tuple[Step, ...] = (),
                 blamed_instructions: tuple[Instruction, ...] = ()) -> None:
        super().__init__(message)
        self.direction = direction
        self.schema = schema
        self.version = version
        self.field = field
        self.steps = steps
        self.blamed_steps = blamed_steps
        self.blamed_instructions = blamed_instructions


@dataclass(frozen=True)
class Migrated:
    """A migrated body (JSON, as the target version's model dumps it) and the steps taken."""

    body: dict[str, Any]
    steps: tuple[Step, ...] = field(default=())


def body_keys(model: type[Any]) -> set[str]:
    """The body keys a model's JSON has: each field's name and its aliases."""
    out: set[str] = set()
    for name, info in getattr(model, "model_fields", {}).items():
        out.add(name)
        for alias in (info.alias, info.serialization_alias, info.validation_alias):
            if isinstance(alias, str):
                out.add(alias)
    return out


def sides(direction: Direction, older: str, version: str) -> tuple[str, str]:
    """(the version whose body a ``direction`` migration of ``version`` receives, the one
    it makes): a request migration turns ``older``'s body into ``version``'s, a response
    migration the reverse."""
    return (older, version) if direction == "request" else (version, older)


def _name(func: Any) -> str:
    inner = getattr(func, "transformer", func)
    return str(getattr(inner, "__name__", repr(inner)))


def _render(instruction: Any) -> tuple[str, frozenset[str]]:
    """``schema(Customer).field("x").had(name="y")`` for a Cadwyn instruction (duck-typed:
    the instruction classes live in cadwyn/structure/schemas.py and enums.py)."""
    kind = type(instruction).__name__
    if hasattr(instruction, "enum"):
        members = getattr(instruction, "members", {})
        shown = ", ".join(repr(m) for m in members)
        verb = "didnt_have" if "Didnt" in kind else "had"
        return f"enum({instruction.enum.__name__}).{verb}({shown})", frozenset()
    target = getattr(instruction, "schema", None)
    name = getattr(instruction, "name", None)
    if target is None or not isinstance(name, str):
        return kind, frozenset()
    head = f'schema({target.__name__}).field("{name}")'
    names = {name}
    if kind == "FieldHadInstruction":
        args = []
        new_name = getattr(instruction, "new_name", None)
        if isinstance(new_name, str):
            args.append(f'name="{new_name}"')
            names.add(new_name)
        new_type = getattr(instruction, "type", None)
        if new_type is not None and (isinstance(new_type, type) or hasattr(new_type, "__args__")):
            args.append(f"type={getattr(new_type, '__name__', new_type)}")
        return f"{head}.had({', '.join(args) or '...'})", frozenset(names)
    if kind == "FieldDidntExistInstruction":
        return f"{head}.didnt_exist", frozenset(names)
    if kind == "FieldExistedAsInstruction":
        return f"{head}.existed_as(...)", frozenset(names)
    if kind == "FieldDidntHaveInstruction":
        attrs = ", ".join(repr(a) for a in getattr(instruction, "attributes", ()))
        return f"{head}.didnt_have({attrs})", frozenset(names)
    return f"{head}: {kind}", frozenset(names)


def _enums_of(schema: type[Any], key: str) -> set[type[Any]]:
    """The Enum classes the annotation of ``schema``'s field ``key`` (name or alias) uses."""
    from enum import Enum
    from typing import get_args

    found: set[type[Any]] = set()
    for name, info in getattr(schema, "model_fields", {}).items():
        if key not in (name, info.alias):
            continue
        stack = [info.annotation]
        while stack:
            annotation = stack.pop()
            if isinstance(annotation, type) and issubclass(annotation, Enum):
                found.add(annotation)
            stack.extend(get_args(annotation))
    return found


@dataclass(frozen=True)
class Route:
    """One HEAD route of a Cadwyn app: what its endpoint takes and returns.

    ``body`` and ``response`` are the HEAD pydantic models of the request body and of
    ``response_model`` (``None`` when the route has none, or one that is not a model);
    ``status_code`` the success status it declares (``None``: FastAPI's default).
    """

    name: str
    path: str
    methods: frozenset[str]
    body: type[Any] | None
    response: type[Any] | None
    status_code: int | None = field(default=None, compare=False)
    #: its header, query and cookie parameters (``_params.Param``)
    params: tuple[Any, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"{'/'.join(sorted(self.methods))} {self.path} ({self.name})"


def _nests(outer: type[Any], inner: type[Any]) -> bool:
    """Whether a field of ``outer`` holds ``inner`` (in a list, a dict, an optional...)."""
    import typing

    def holds(annotation: Any, depth: int = 0) -> bool:
        if annotation is inner:
            return True
        return depth < 8 and any(holds(a, depth + 1) for a in typing.get_args(annotation))

    fields = getattr(outer, "model_fields", {})
    return any(holds(info.annotation) for info in fields.values())


def _subclasses(model: type[Any]) -> list[type[Any]]:
    """``model``'s subclasses in the user's code, recursively (not the models Cadwyn or
    pydantic generate from it)."""
    out: list[type[Any]] = []
    for sub in model.__subclasses__():
        if sub.__module__.split(".")[0] in ("cadwyn", "pydantic"):
            continue
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def _model_or_none(annotation: Any) -> type[Any] | None:
    from pydantic import BaseModel

    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) \
        else None


def _head_router(app: Any) -> Any:
    """The HEAD router of a ``cadwyn.Cadwyn`` app.

    Cadwyn keeps the routers given to ``generate_and_include_versioned_routers`` in the
    app's ``_latest_version_router`` (``cadwyn/applications.py``, Cadwyn 8.2 and 9.0) and has
    no public accessor; this is the one place compatfuzz reads a private Cadwyn attribute
    (STYLE.md 7), and tests/cadwyn/test_routes.py pins it on the installed Cadwyn.  FastAPI
    0.165 keeps included routers unflattened (``fastapi/routing.py``, ``_IncludedRouter``:
    ``original_router`` and ``include_context.prefix``); older FastAPI copies the routes.
    """
    router = getattr(app, "_latest_version_router", None)
    if router is None:
        raise InvalidArgument(
            f"cannot read the routes of {app!r}: this Cadwyn release keeps no "
            "_latest_version_router; point at the VersionBundle instead "
            "(cadwyn = 'shop.versions:version_bundle')"
        )
    return router


def _routes_of(routes: Iterable[Any]) -> tuple[Route, ...]:
    """The :class:`Route` of each ``APIRoute`` in ``routes``, included routers walked."""
    from fastapi.routing import APIRoute

    from compatfuzz.cadwyn._params import params_of

    out: list[Route] = []

    def walk(routes: Iterable[Any], prefix: str) -> None:
        for route in routes:
            if isinstance(route, APIRoute):
                body = route.body_field.field_info.annotation if route.body_field else None
                out.append(Route(route.name, prefix + route.path,
                                 frozenset(route.methods or ()), _model_or_none(body),
                                 _model_or_none(route.response_model), route.status_code,
                                 params_of(route)))
            elif hasattr(route, "original_router"):
                context = getattr(route, "include_context", None)
                walk(route.original_router.routes,
                     prefix + (getattr(context, "prefix", "") or ""))

    walk(routes, "")
    return tuple(out)


class CadwynAPI:
    """The versions, per-version schemas and migrations of one Cadwyn ``VersionBundle``.

    ``source`` is a ``VersionBundle`` or a ``cadwyn.Cadwyn`` app (its ``versions``).
    ``schemas`` adds HEAD schemas to the ones the bundle names in its instructions and
    migrations (a response model only reached through a route, say).

    >>> api = CadwynAPI(version_bundle)                                    # doctest: +SKIP
    >>> api.request_up(Customer, {"name": "Cher", ...}, "2023-01-01").body  # doctest: +SKIP

    Raises:
        InvalidArgument: ``source`` is neither a bundle nor a Cadwyn app.

    .. versionadded:: 0.1.0
    """

    def __init__(self, source: Any, *, schemas: Iterable[type[Any]] = ()) -> None:
        cadwyn = _require_cadwyn()
        bundle = source
        if not isinstance(bundle, cadwyn.VersionBundle):  # a Cadwyn app keeps it in .versions
            bundle = getattr(source, "versions", source)
        if not isinstance(bundle, cadwyn.VersionBundle):
            raise InvalidArgument(
                f"Expected a cadwyn.VersionBundle or a cadwyn.Cadwyn app but got "
                f"source={source!r} (type={type(source).__name__}); point at the module-level "
                "VersionBundle, e.g. 'shop.versions:version_bundle'"
            )
        self.bundle = bundle
        #: the app's HEAD routes (empty when ``source`` is the bundle)
        self.routes: tuple[Route, ...] = (
            () if source is bundle else _routes_of(_head_router(source).routes))
        #: the Cadwyn app (``None`` when ``source`` is the bundle): what the route
        #: properties (``_routes``) send their requests to
        self.app: Any = None if source is bundle else source
        self._versioned: dict[str, tuple[Route, ...]] | None = None
        #: version values, oldest first
        self.versions: tuple[str, ...] = tuple(str(v) for v in reversed(bundle.version_values))
        self._models = cadwyn.generate_versioned_models(bundle)
        found: dict[type[Any], None] = {}
        from pydantic import BaseModel

        for version in (bundle.head_version, *bundle.versions):
            for change in version.changes:
                for instruction in change.alter_schema_instructions:
                    found.setdefault(instruction.schema)
                for key in (*change.alter_request_by_schema_instructions,
                            *change.alter_response_by_schema_instructions):
                    if isinstance(key, type) and issubclass(key, BaseModel):
                        found.setdefault(key)
        migrated = {key for version in bundle.versions for change in version.changes
                    for key in (*change.alter_request_by_schema_instructions,
                                *change.alter_response_by_schema_instructions)}
        for base in list(found):
            # a base class named only so that its subclasses inherit the instructions
            # (Cadwyn's tutorial BaseUser) is no body of its own
            if base not in migrated and any(
                    other is not base and issubclass(other, base) and other in migrated
                    for other in found):
                del found[base]
        #: what the bundle form had to guess or leave out (``roles``, nested models, base
        #: classes): the suite warns of each and points to the app form
        self.notes: list[str] = []
        if not self.routes:
            self._bundle_form(found, migrated, schemas)
        for route in self.routes:  # what the app's endpoints take and return
            for model in (route.body, route.response):
                if model is not None:
                    found.setdefault(model)
        for extra in schemas:
            if not (isinstance(extra, type) and issubclass(extra, BaseModel)):
                raise InvalidArgument(
                    f"Expected HEAD pydantic models in schemas but got {extra!r} "
                    f"(type={type(extra).__name__})"
                )
            found.setdefault(extra)
        #: the HEAD schema classes, in the order the bundle first names them (without a
        #: base class that has no migrations of its own while a subclass has)
        self.schemas: tuple[type[Any], ...] = tuple(found)

    def _bundle_form(self, found: dict[type[Any], None], migrated: set[Any],
                     extra: Iterable[type[Any]]) -> None:
        """Without the app, which schemas are bodies is read from the bundle alone: a model
        that only ever sits inside another named one (an ``Address`` field) is checked
        through its parent, as Cadwyn migrates it there (a schema migration applies to the
        body's own model only); a subclass the bundle never names that inherits a named
        class's instructions is left out, said so, as is a schema whose role is a guess."""
        given = set(extra)
        for model in list(found):
            if model in migrated or model in given:
                continue
            if any(other is not model and _nests(other, model) for other in found):
                del found[model]
        instructed = {getattr(i, "schema", None) for v in self.bundle.versions
                      for change in v.changes for i in change.alter_schema_instructions}
        left_out: set[type[Any]] = set()
        for model in [*found, *(m for m in instructed if isinstance(m, type))]:
            for sub in _subclasses(model):
                if sub not in found and sub not in given and sub not in left_out:
                    left_out.add(sub)
                    self.notes.append(
                        f"{sub.__name__} inherits the instructions on {model.__name__}, but "
                        "the bundle names it in no migration: the bundle form cannot tell "
                        "whether clients send or read it and leaves it out (list it in "
                        "schemas = [...], or point cadwyn at the app)")
        for model in found:
            if model in migrated or model in given:
                continue
            self.notes.append(
                f"{model.__name__} has schema instructions but no migration: the bundle form "
                "cannot tell whether clients send or read it and checks it both ways (point "
                "cadwyn at the app to take each schema's role from the routes)")

    def path_migrations(self) -> list[str]:
        """The bundle's path-based migrations (``convert_request_to_next_version_for("/x",
        ["POST"])``), as ``VersionChange.function (POST /x)``: only the app form can run
        them, as they belong to a route."""
        out = []
        for version in self.bundle.versions:
            for change in version.changes:
                for attr in ("alter_request_by_path_instructions",
                             "alter_response_by_path_instructions"):
                    for path, instructions in (getattr(change, attr, None) or {}).items():
                        for instruction in instructions:
                            methods = "/".join(sorted(getattr(instruction, "methods", ())))
                            name = getattr(getattr(instruction, "transformer", None),
                                           "__name__", "?")
                            out.append(f"{change.__name__}.{name} ({methods} {path})")
        return out

    def __repr__(self) -> str:
        return f"CadwynAPI(<{len(self.versions)} versions: {', '.join(self.versions)}>)"

    def roles(self, schema: type[Any]) -> frozenset[Direction]:
        """Whether ``schema`` is a request body, a response, or both: from the app's routes
        when some take or return it; otherwise as far as the bundle tells: a schema with
        only request migrations is a request body (Cadwyn's tutorial ``UserCreateRequest``),
        one with only response migrations a response; one with both, or with neither
        (schema instructions alone), is taken as both."""
        if self.routes:
            request = any(route.body is schema for route in self.routes)
            response = any(route.response is schema for route in self.routes)
            if request or response:
                return frozenset({"request"} if not response else
                                 {"response"} if not request else {"request", "response"})
        request = response = False
        for version in self.bundle.versions:
            for change in version.changes:
                request = request or schema in change.alter_request_by_schema_instructions
                response = response or schema in change.alter_response_by_schema_instructions
        if request == response:
            return frozenset({"request", "response"})
        return frozenset({"request"} if request else {"response"})

    # -- schemas -------------------------------------------------------------------------

    def _check_version(self, version: str, *, head_ok: bool = True) -> None:
        if version == HEAD and head_ok:
            return
        if version not in self.versions:
            raise InvalidArgument(
                f"Expected one of the bundle's versions {list(self.versions)}"
                f"{' or HEAD' if head_ok else ''} but got version={version!r}"
            )

    def model(self, schema: type[Any], version: str) -> type[Any]:
        """The pydantic model Cadwyn generates for ``schema`` (a HEAD class) in ``version``."""
        self._check_version(version)
        if version == HEAD:
            return schema
        return self._models[version][schema]  # type: ignore[no-any-return]

    def version_routes(self, version: str) -> tuple[Route, ...]:
        """The app's routes as Cadwyn serves them in ``version`` (empty without the app):
        Cadwyn's public ``generate_versioned_routers`` on the HEAD router, which applies
        each version's ``endpoint(...)`` instructions, as the app does on its first
        request (``Cadwyn._cadwyn_initialize``), without starting the app."""
        self._check_version(version)
        if self.app is None or version == HEAD:
            return self.routes
        if self._versioned is None:
            generated = _require_cadwyn().generate_versioned_routers(
                _head_router(self.app), versions=self.bundle)
            self._versioned = {str(v): _routes_of(router.routes)
                               for v, router in generated.endpoints.items()}
        return self._versioned.get(version, ())

    def changes_between(self, version: str) -> list[tuple[str, Any]]:
        """The ``VersionChange`` classes between ``version`` and HEAD, oldest first, each with
        the value of the version that introduced it (``VersionBundle._migrate_request``)."""
        self._check_version(version, head_ok=False)
        newer = set(self.versions[self.versions.index(version) + 1:])
        return [(str(v.value), change) for v in reversed(self.bundle.versions)
                if str(v.value) in newer for change in v.changes]

    def instructions(self, schema: type[Any], version: str) -> tuple[Instruction, ...]:
        """The schema/enum instructions that make ``schema`` differ between ``version`` and
        HEAD (inherited ones included: Cadwyn applies a base's changes to subclasses)."""
        out = []
        for value, change in self.changes_between(version):
            for instruction in (*change.alter_schema_instructions, *change.alter_enum_instructions):
                target = getattr(instruction, "schema", None)
                if target is not None and not (isinstance(target, type)
                                               and issubclass(schema, target)):
                    continue
                text, fields = _render(instruction)
                older = (getattr(instruction, "new_name", None)
                         if type(instruction).__name__ == "FieldHadInstruction" else None)
                out.append(Instruction(value, change.__name__, text, fields,
                                       getattr(instruction, "enum", None),
                                       (instruction.name, older) if isinstance(older, str)
                                       else None))
        return tuple(out)

    # -- converters ----------------------------------------------------------------------

    def _run(self, direction: Direction, schema: type[Any], body: dict[str, Any],
             version: str, route: Route | None = None,
             ) -> tuple[dict[str, Any], tuple[Step, ...]]:
        from fastapi import Request, Response

        cadwyn = _require_cadwyn()
        changes = self.changes_between(version)
        if direction == "response":
            changes.reverse()
        steps: list[Step] = []
        for value, change in changes:
            table = (change.alter_request_by_schema_instructions if direction == "request"
                     else change.alter_response_by_schema_instructions)
            paths = (change.alter_request_by_path_instructions if direction == "request"
                     else change.alter_response_by_path_instructions)
            by_path = [] if route is None else [
                i for i in paths.get(route.path, ()) if route.methods & set(i.methods)]
            for instruction in (*table.get(schema, ()), *by_path):
                before = copy.deepcopy(body)
                if direction == "request":
                    method = "POST" if route is None else sorted(route.methods)[0]
                    path = "/" if route is None else route.path
                    request = Request({"type": "http", "method": method, "path": path,
                                       "headers": [], "query_string": b""})
                    info: Any = cadwyn.RequestInfo(request, body)
                else:
                    info = cadwyn.ResponseInfo(Response(status_code=200), body)
                try:
                    instruction(info)
                except Exception as exc:
                    step = Step(value, change.__name__, _name(instruction), before, body)
                    raise MigrationFailure(
                        f"{direction} migration {step} raised {type(exc).__name__}: {exc}\n"
                        f"  on the {schema.__name__} body {before!r}"
                        + self._direction_hint(exc, direction, schema, value),
                        direction=direction, schema=schema.__name__, version=version,
                        steps=(*steps, step), blamed_steps=(step,),
                    ) from exc
                body = info.body
                steps.append(Step(value, change.__name__, _name(instruction), before,
                                  copy.deepcopy(body)))
        return body, tuple(steps)

    def _direction_hint(self, exc: Exception, direction: Direction, schema: type[Any],
                        version: str) -> str:
        """For a ``KeyError`` on a key the body on the other side of ``version`` has (and
        this one lacks): that a migration of this direction receives the other shape."""
        key = exc.args[0] if isinstance(exc, KeyError) and exc.args else None
        index = self.versions.index(version) if version in self.versions else 0
        if not isinstance(key, str) or index == 0:
            return ""
        gets, other = sides(direction, self.versions[index - 1], version)
        try:
            has = {v: body_keys(self.model(schema, v)) for v in (gets, other)}
        except KeyError:
            return ""
        if key in has[gets] or key not in has[other]:
            return ""
        return (f"\n  hint: `{key}` is a {other} field, and a {direction} migration of "
                f"version {version} receives the {gets} body and makes the {other} one: "
                "does it run in the wrong direction?")

    def _invalid(self, direction: Direction, schema: type[Any], version: str, target: str, *,
                 body: Any, steps: tuple[Step, ...], error: Any) -> MigrationFailure:
        errors = error.errors(include_url=False)
        first = errors[0]["loc"][0] if errors and errors[0]["loc"] else None
        key = str(first) if first is not None else None
        origin = version if direction == "request" else HEAD
        lines = [
            f"a {origin} {direction} body for {schema.__name__}, migrated to {target}, "
            f"is invalid in {target}:"
        ]
        for err in errors:
            loc = ".".join(str(p) for p in err["loc"]) or "(root)"
            lines.append(f"  {loc}: {err['msg']} (got {err.get('input')!r})")
        blamed, instructions = self.blame(schema, version, key, steps)
        lines.extend(self._blame_lines(key, blamed, instructions))
        lines.append(f"  body before migration: {steps[0].before if steps else body!r}")
        return MigrationFailure(
            "\n".join(lines), direction=direction, schema=schema.__name__, version=version,
            field=key, steps=steps, blamed_steps=blamed, blamed_instructions=instructions,
        )

    def blame(self, schema: type[Any], version: str, key: str | None,
              steps: Iterable[Step]) -> tuple[tuple[Step, ...], tuple[Instruction, ...]]:
        """The migrations (of ``steps``) and the schema instructions that touched ``key``."""
        if key is None:
            return (), ()
        touched = tuple(s for s in steps if s.touched(key))
        enums = _enums_of(schema, key)
        instructions = tuple(i for i in self.instructions(schema, version)
                             if key in i.fields or (i.enum is not None and i.enum in enums))
        return touched, instructions

    @staticmethod
    def _blame_lines(key: str | None, steps: tuple[Step, ...],
                     instructions: tuple[Instruction, ...]) -> list[str]:
        if key is None:
            return []
        lines = []
        if steps:
            lines.append(f"  `{key}` was changed by: " + "; ".join(str(s) for s in steps))
        else:
            lines.append(f"  no migration touched `{key}`")
        if instructions:
            lines.append(f"  schema instructions on `{key}`: "
                         + "; ".join(str(i) for i in instructions))
        return lines

    def request_up(self, schema: type[Any], body: Mapping[str, Any],
                   from_version: str, *, route: Route | None = None) -> Migrated:
        """Migrate an old client's request ``body`` (JSON, valid in ``from_version``) to HEAD,
        as Cadwyn does before the route runs; the result is HEAD's JSON dump.  With
        ``route``, its path-based request migrations run too.

        Raises:
            InvalidArgument: ``body`` is not valid in ``from_version`` to start with.
            MigrationFailure: a migration raised, or HEAD rejects the migrated body.
        """
        from pydantic import ValidationError

        self._check_version(from_version, head_ok=False)
        old = self._validate_input(schema, body, from_version)
        migrated, steps = self._run(
            "request", schema, old.model_dump(by_alias=True, exclude_unset=True), from_version,
            route)
        try:
            head = schema.model_validate(migrated)
        except ValidationError as error:
            raise self._invalid("request", schema, from_version, HEAD, body=migrated,
                                steps=steps, error=error) from None
        return Migrated(head.model_dump(mode="json", by_alias=True), steps)

    def response_down(self, schema: type[Any], body: Mapping[str, Any],
                      to_version: str, *, route: Route | None = None) -> Migrated:
        """Migrate a HEAD response ``body`` (JSON, valid in HEAD) down to ``to_version``, as
        Cadwyn does after the route returns; the result is that version's JSON dump.  With
        ``route``, its path-based response migrations run too.

        Raises:
            InvalidArgument: ``body`` is not valid in HEAD to start with.
            MigrationFailure: a migration raised, or ``to_version`` rejects the result.
        """
        from pydantic import ValidationError

        self._check_version(to_version, head_ok=False)
        head = self._validate_input(schema, body, HEAD)
        migrated, steps = self._run("response", schema, head.model_dump(by_alias=True),
                                    to_version, route)
        model = self.model(schema, to_version)
        try:
            old = model.model_validate(migrated)
        except ValidationError as error:
            raise self._invalid("response", schema, to_version, to_version, body=migrated,
                                steps=steps, error=error) from None
        # the migrated body may hold HEAD enum members where the old model has Cadwyn's
        # generated copy of the enum: pydantic accepts them by value and warns on dumping
        return Migrated(old.model_dump(mode="json", by_alias=True, warnings=False), steps)

    def _validate_input(self, schema: type[Any], body: Mapping[str, Any], version: str) -> Any:
        """``body`` as ``version``'s model reads it: in JSON mode, as the pydantic family
        judges a document (a body is JSON; strict models refuse a UUID's string otherwise)."""
        from compatfuzz.pydantic import parse

        model = self.model(schema, version)
        inst, errors = parse(model, body)
        if inst is None:
            raise InvalidArgument(
                f"the body is not a valid {schema.__name__} in version {version}, so it cannot "
                "be migrated:\n" + "\n".join(f"  {e}" for e in errors[:20])
            )
        return inst

    def converters(self, schema: type[Any]) -> SchemaConverters:
        """``request_up(body, from_version)`` and ``response_down(body, to_version)`` for one
        schema, returning plain JSON dicts: the shape the pydantic family's converters take."""
        if schema not in self.schemas:
            raise InvalidArgument(
                f"Expected one of the bundle's schemas {[s.__name__ for s in self.schemas]} "
                f"but got schema={schema!r}; pass it in CadwynAPI(..., schemas=[...])"
            )
        return SchemaConverters(
            request_up=lambda body, version: self.request_up(schema, body, version).body,
            response_down=lambda body, version: self.response_down(schema, body, version).body,
        )


@dataclass(frozen=True)
class SchemaConverters:
    """The two converters of one schema, over JSON dicts."""

    request_up: Callable[[Mapping[str, Any], str], dict[str, Any]]
    response_down: Callable[[Mapping[str, Any], str], dict[str, Any]]
