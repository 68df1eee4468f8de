"""The API model: kinds, versions, a hub, and the user's converters and defaulters.

An :class:`API` accepts converters in every shape people actually write them in
(a ConversionReview-style ``convert(obj, desired_api_version)``, a hub-and-spoke pair
``to_hub``/``from_hub`` as in Kubernetes' internal types, or one function per version
pair) and hides the shape behind one method, :meth:`API.convert`, so the properties do
not care which form the user chose.  It never mutates what it is given and wraps anything
a converter raises in :class:`~compatfuzz.errors.ConverterError` naming the step, even a
``SystemExit`` (``sys.exit(0)`` in a converter made a run pass silently).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._admission import admit, admit_schema
from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.roundtrip._check._accept import check_accepts, check_stash_prefixes
from compatfuzz.roundtrip._check._converter import Converter
from compatfuzz.roundtrip._check._converters import (
    Converters,
    call_user,
    check_callable,
    plain_json,
    short_repr,
)
from compatfuzz.roundtrip._check._suite import check_api_name
from compatfuzz.schema import CRD, Schema

__all__ = ["API", "Kind", "json_copy"]

Obj = dict[str, Any]
ConvertFn = Callable[[Obj, str], Obj]
ToHubFn = Callable[[Obj], Any]
FromHubFn = Callable[[Any, str], Obj]
PairFn = Callable[[Obj], Obj]
DefaultFn = Callable[[Obj], "Obj | None"]


def json_copy(value: Any) -> Any:
    """Return a deep copy of a JSON value; several times faster than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    return value


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of an API: its versions (name -> schema, in declaration order).

    ``group`` makes objects carry ``apiVersion: <group>/<version>`` (as CRDs do); with no
    group the version name itself is the ``apiVersion``.  ``hub`` is the version objects
    are converted through (a CRD's storage version by default); a name that is not one of
    ``versions`` means an *internal* hub that only the converters know about.
    ``typed`` says whether objects carry ``apiVersion``/``kind`` fields at all; it is on
    when the schemas declare them.
    """

    name: str
    versions: Mapping[str, Schema]
    group: str = ""
    hub: str | None = None
    typed: bool = True
    meta: Mapping[str, Any] = field(default_factory=dict)

    def api_version(self, version: str) -> str:
        """The ``apiVersion`` an object of ``version`` carries."""
        return f"{self.group}/{version}" if self.group else version

    def schema(self, version: str) -> Schema:
        try:
            return self.versions[version]
        except KeyError:
            raise InvalidArgument(
                f"{self.name} has no version {version!r}; it has: {', '.join(self.versions)}"
            ) from None


def beside_caller(path: str | Path, frame: Any) -> Path:
    """A relative ``path`` read from the folder of the file that declared the API, as the
    TOML form reads it from the config's folder; a path that exists only
    relative to the working directory still works."""
    p = Path(path)
    if p.is_absolute():
        return p
    declaring = frame.f_code.co_filename
    if declaring and not declaring.startswith("<"):
        beside = Path(declaring).resolve().parent / p
        if beside.exists() or not p.exists():
            return beside
    return p


PIPELINES = ("apiserver", "plain")


def _pipeline_mode(name: str, kinds: Sequence[Kind], pipeline: str | None,
                   hub: str | None) -> str:
    """``apiserver`` for CRDs unless told otherwise; ``plain`` for everything else."""
    if pipeline is None:
        served = all(k.typed and k.group and _storage(k, hub) is not None and all(
            s.kubernetes and "openapi" in s.meta for s in k.versions.values()) for k in kinds)
        return "apiserver" if served else "plain"
    if pipeline not in PIPELINES:
        raise InvalidArgument(
            f"Expected pipeline='apiserver' or pipeline='plain' but got pipeline={pipeline!r}; "
            "'apiserver' judges round trips as a Kubernetes API server would (pruning, "
            "defaulting, conversion-response rules), 'plain' compares the converters' dicts"
        )
    if pipeline == "apiserver":
        _warn_non_structural(name, kinds)
        for k in kinds:
            if _storage(k, hub) is None:
                raise InvalidArgument(
                    f"API {name!r}: pipeline='apiserver' needs a storage version, but "
                    f"{k.name} has none among its versions (hub {hub or k.hub!r}); pass hub= "
                    f"naming one of {', '.join(k.versions)} (objects are stored in it)"
                )
    return pipeline


def _warn_non_structural(name: str, kinds: Sequence[Kind]) -> None:
    """A schema the API server would refuse in a CRD gets a verdict no server could give."""
    import warnings

    from compatfuzz.errors import CompatfuzzWarning
    from compatfuzz.schema import lint_structural

    for k in kinds:
        for version, schema in k.versions.items():
            if "openapi" in schema.meta:
                continue  # a CRD version: the loader's structural schema
            findings = lint_structural(schema)
            if findings:
                shown = "; ".join(f"{f.path or '<root>'}: {f.message}" for f in findings[:3])
                warnings.warn(
                    f"API {name!r}: {k.name} {version} is not a structural schema, so a real "
                    f"API server would refuse it as a CRD and the API-server pipeline judges "
                    f"it as one anyway ({len(findings)} findings: {shown}); fix the schema or "
                    "use pipeline='plain'", CompatfuzzWarning, stacklevel=4)


def _check_hub(name: str, hub: str | None, versions: set[str]) -> None:
    """Refuse a hub that is no version but reads like a misspelt one (``v1beta`` for
    ``v1beta1``): such a hub would silently be taken as an internal hub."""
    import difflib

    if hub is None or hub in versions:
        return
    close = difflib.get_close_matches(hub, sorted(versions), n=1, cutoff=0.75)
    if close:
        raise InvalidArgument(
            f"API {name!r}: hub {hub!r} is not a version; did you mean {close[0]!r}? The "
            f"versions are {', '.join(sorted(versions))}. A hub that is no version is an "
            "internal hub that only to_hub/from_hub know: give it a name unlike any "
            "version's, such as 'internal'"
        )


def _storage(kind: Kind, hub: str | None) -> str | None:
    """The version the server stores ``kind`` in: the CRD's storage version, else the hub."""
    for candidate in (kind.hub, hub):
        if candidate is not None and candidate in kind.versions:
            return candidate
    return None


class API:
    """A versioned API and the converters that move its objects between versions.

    ``kinds`` lists the kinds that share the converters (a conversion webhook usually
    serves several).  Exactly one converter form is the primary one:

    * ``convert(obj, desired_api_version) -> obj``, ConversionReview style; the second
      argument is the target ``apiVersion`` (``"example.com/v1"``);
    * ``to_hub(obj) -> hub`` and ``from_hub(hub, version) -> obj``, hub and spoke; the
      second argument is the target version *name* (``"v1"``);
    * ``converters={("v1alpha1", "v1"): f, ...}`` with ``f(obj) -> obj``; missing pairs
      are reached by chaining the given ones.

    Per-pair converters may also be combined with ``convert`` or the hub form, in which
    case they take precedence for their pair.  ``converter=`` takes any other kind of
    converter instead (``compatfuzz.roundtrip._check._converter.Converter``: the seam a new
    kind plugs into).  ``defaulters={"v1": f}`` maps a version to ``f(obj) -> obj`` (or
    ``None`` after defaulting in place).

    ``go_durations`` (field-path globs holding Go durations, ``"90m" == "1h30m"``) and
    ``empty_struct_is_absent`` are passed to :func:`compatfuzz.semantic.equal` for every
    comparison of this API's objects (``[api.semantic]`` in ``compatfuzz.toml``).

    ``accept`` lists :class:`~compatfuzz.roundtrip.Accept` entries: deliberate
    differences (a field path, for some properties and version pairs, with a why) that
    are not failures. ``stash_annotations`` lists the annotation-key prefixes the
    converters keep their own data under (``"cluster.x-k8s.io/conversion-data"``); every
    property compares objects without them (``[[api.accept]]`` and
    ``stash_annotations`` in ``compatfuzz.toml``; docs/roundtrip.md).

    ``overrides`` (:class:`compatfuzz.strategies.Overrides`) steers the drawing of this
    API's objects by field path (``[api.overrides]`` in ``compatfuzz.toml``).

    ``plan_limit`` caps the version pairs (and triples) planned per kind and property:
    beyond it a fixed sample is tested, since ``path_independent`` is cubic in the
    versions (``None`` or ``"none"`` plans them all; docs/security.md).

    ``apiserver`` (``"model"``, ``"real"`` or ``"both"``) says who plays the API server for
    ``roundtrip``, ``valid`` and ``path_independent``: the model, a real kube-apiserver and
    etcd started for the run (``compatfuzz.roundtrip.serving``), or both, every step's
    answers compared (docs/apiserver.md).

    ``pipeline`` says how a round trip is judged. ``"apiserver"`` (the default for CRDs)
    moves every object through a model of the Kubernetes API server
    (``compatfuzz.apiserver``): pruning, defaulting and ObjectMeta decoding by each
    version's schema, storage in the hub (storage) version, and the rules the server
    applies to a conversion response. ``"plain"`` (the default for other schemas)
    compares the converters' dicts as they are.

    Example::

        api = API.from_crd("widgets", "config/crd/widgets.yaml", convert=convert)

    Raises:
        InvalidArgument: no converter, a converter that is not callable, a pair or a
            defaulter naming an unknown version, versions no chain of pair
            converters connects, or an accept entry that is malformed or names a
            property or version that does not exist.

    .. versionadded:: 0.1
    """

    def __init__(
        self,
        name: str,
        kinds: Sequence[Kind],
        *,
        hub: str | None = None,
        convert: ConvertFn | None = None,
        to_hub: ToHubFn | None = None,
        from_hub: FromHubFn | None = None,
        converters: Mapping[tuple[str, str], PairFn] | None = None,
        defaulters: Mapping[str, DefaultFn] | None = None,
        source: str | None = None,
        pipeline: str | None = None,
        go_durations: Iterable[str] = (),
        empty_struct_is_absent: bool = False,
        accept: Iterable[Any] = (),
        stash_annotations: Iterable[str] = (),
        plan_limit: int | str | None = 300,
        apiserver: str = "model",
        converter: Converter | None = None,
        overrides: Any = None,
    ) -> None:
        check_api_name(name)
        kinds = tuple(kinds)
        if not kinds or not all(isinstance(k, Kind) for k in kinds):
            raise InvalidArgument(
                f"Expected a non-empty sequence of Kind for kinds but got kinds={kinds!r}; "
                "use API.from_crd() or API.from_schemas() to build them"
            )
        versions = {v for k in kinds for v in k.versions}
        self._converters: Converter
        if converter is not None:
            if convert or to_hub or from_hub or converters:
                raise InvalidArgument(
                    f"API {name!r}: pass converter= alone, or the Python converters "
                    "(convert=, to_hub=/from_hub=, converters=), not both")
            if not isinstance(converter, Converter):
                raise InvalidArgument(
                    f"Expected a compatfuzz Converter but got converter={converter!r} "
                    f"(type={type(converter).__name__}); pass a function as convert=")
            self._converters = converter
        else:
            self._converters = Converters(name, versions, convert=convert, to_hub=to_hub,
                                          from_hub=from_hub, converters=converters)
        self._defaulters = dict(defaulters or {})
        for version, fn in self._defaulters.items():
            if version not in versions:
                raise InvalidArgument(
                    f"API {name!r}: defaulters key {version!r} is not a version; "
                    f"the versions are {sorted(versions)}"
                )
            check_callable(f"defaulters[{version!r}]", fn)
        _check_hub(name, hub, versions)
        self.name = name
        self.kinds = kinds
        self.hub = hub
        self.source = source
        self.pipeline = _pipeline_mode(name, kinds, pipeline, hub)
        if isinstance(go_durations, str):
            raise InvalidArgument(
                f"Expected a list of field-path globs but got go_durations={go_durations!r}; "
                f"write go_durations=[{go_durations!r}]"
            )
        self.go_durations = tuple(go_durations)
        self.empty_struct_is_absent = bool(empty_struct_is_absent)
        self.accept = check_accepts(name, accept, [list(k.versions) for k in kinds])
        self.overrides = _check_overrides(overrides)
        self.stash_annotations = check_stash_prefixes(name, stash_annotations)
        from compatfuzz.roundtrip._check._limits import plan_limit_arg

        #: version tuples planned per kind and property, ``None`` for all
        self.plan_limit = plan_limit_arg(plan_limit)
        self._servers: dict[str, Any] = {}
        if apiserver not in ("model", "real", "both"):
            raise InvalidArgument(
                f"API {name!r}: apiserver must be 'model', 'real' or 'both', got "
                f"{apiserver!r}")
        if apiserver != "model" and self.pipeline != "apiserver":
            raise InvalidArgument(
                f"API {name!r}: apiserver={apiserver!r} needs CRDs judged by the API-server "
                "pipeline (crd = ..., pipeline 'apiserver'); this API compares plain dicts")
        #: who judges round trips: the API-server model, a real kube-apiserver, or both
        #: (``compatfuzz.roundtrip._check._real``; ``apiserver =`` in config, ``--apiserver``)
        self.apiserver = apiserver
        for kind in kinds:
            self._converters.check_chains(kind.versions)

    # -- construction helpers -------------------------------------------------------

    @classmethod
    def from_crd(
        cls,
        name: str,
        crd: str | Path | CRD | Iterable[CRD],
        *,
        kind: str | Sequence[str] | None = None,
        **options: Any,
    ) -> API:
        """Return an API for the kinds in a CRD file (or ``CRD`` objects).

        Only served versions with a schema take part; each kind's hub defaults to its
        storage version.  ``kind`` picks some kinds out of a file holding several.
        """
        if isinstance(crd, (str, Path)):
            from compatfuzz.schema import load_crds

            crd = beside_caller(crd, sys._getframe(1))
            crds = list(load_crds(crd))
        elif isinstance(crd, CRD):
            crds = [crd]
        else:
            crds = list(crd)
        wanted = [kind] if isinstance(kind, str) else list(kind or [])
        kinds = []
        for c in crds:
            if wanted and c.kind not in wanted:
                continue
            admit([c])  # a CRD the API server refuses: its error, with file and line
            versions = {v.name: v.schema for v in c.versions if v.served and v.schema}
            kinds.append(Kind(c.kind, versions, group=c.group, hub=c.storage_version))
        if not kinds:
            found = ", ".join(c.kind for c in crds) or "none"
            raise InvalidArgument(
                f"API {name!r}: no kind {wanted!r} in {crd!r} (kinds found: {found}); "
                "fix the kind= argument"
            )
        return cls(name, kinds, **options)

    @classmethod
    def from_schemas(
        cls,
        name: str,
        schemas: Mapping[str, Schema | Mapping[str, Any] | str | Path],
        *,
        kind: str | None = None,
        group: str = "",
        ref_roots: Iterable[str | Path] | None = None,
        **options: Any,
    ) -> API:
        """Return a one-kind API from a ``{version: schema}`` mapping.

        Values may be loaded ``Schema`` objects, plain JSON Schema dicts, or paths for
        :func:`compatfuzz.schema.load_schema`.  Objects carry ``apiVersion``/``kind`` only
        if the schemas declare those properties.  ``ref_roots`` are folders, besides each
        schema file's own, whose files a ``$ref`` may read.
        """
        loaded: dict[str, Schema] = {}
        caller = sys._getframe(1)
        for version, value in schemas.items():
            if isinstance(value, Schema):
                loaded[version] = value
            elif isinstance(value, Mapping):
                loaded[version] = Schema(dict(value), name=f"{kind or name} {version}")
            else:
                from compatfuzz.schema import load_schema

                loaded[version] = load_schema(beside_caller(value, caller),
                                              ref_roots=ref_roots)
        if len(loaded) < 2:
            raise InvalidArgument(
                f"API {name!r} needs at least two versions to round-trip but got "
                f"{list(loaded)}; add the other versions' schemas"
            )
        for schema in loaded.values():
            admit_schema(schema)  # a CRD version's: the API server must accept its CRD
        typed = all(
            {"apiVersion", "kind"} <= set(s.root.get("properties") or {})
            for s in loaded.values()
        )
        return cls(name, [Kind(kind or name, loaded, group=group, typed=typed)], **options)

    @property
    def semantic_options(self) -> dict[str, Any]:
        """The keyword arguments this API's round trips pass to ``semantic.equal``."""
        return {"go_durations": self.go_durations,
                "empty_struct_is_absent": self.empty_struct_is_absent}

    # -- conversion -----------------------------------------------------------------

    def kind(self, name: str) -> Kind:
        for k in self.kinds:
            if k.name == name:
                return k
        raise InvalidArgument(
            f"API {self.name!r} has no kind {name!r}; it has "
            f"{', '.join(k.name for k in self.kinds)}"
        )

    def server(self, kind: Kind | str) -> Any:
        """The API-server model for ``kind`` (``compatfuzz.apiserver.APIServer``), or
        ``None`` when the API is judged as plain dicts (``pipeline="plain"``)."""
        k = self.kind(kind) if isinstance(kind, str) else kind
        if self.pipeline != "apiserver":
            return None
        if k.name not in self._servers:
            from compatfuzz.apiserver import APIServer

            storage = _storage(k, self.hub)
            assert storage is not None  # checked by _pipeline_mode
            self._servers[k.name] = APIServer(
                k.versions, storage=storage,
                convert=lambda obj, a, b: self.convert(k, obj, a, b),
                api_version=k.api_version, typed=k.typed,
            )
        return self._servers[k.name]

    def hub_for(self, kind: Kind) -> str | None:
        return self.hub if self.hub is not None else kind.hub

    def defaulted_versions(self, kind: Kind) -> list[str]:
        return [v for v in kind.versions if v in self._defaulters]

    def _checked(self, kind: Kind, out: Any, a: str, b: str) -> Obj:
        if not isinstance(out, dict):
            raise ConverterError(
                f"{self.name}: converting {kind.name} {a} -> {b} returned "
                f"{type(out).__name__} {short_repr(out)}, expected a JSON object (dict)"
            )
        # what a webhook could send back, in plain types
        plain: Obj = plain_json(out, f"{self.name}: converting {kind.name} {a} -> {b}")
        if kind.typed:
            want = kind.api_version(b)
            got = plain.get("apiVersion")
            if got != want:
                raise ConverterError(
                    f"{self.name}: converting {kind.name} {a} -> {b} returned apiVersion "
                    f"{got!r}, expected {want!r}; the converter must set apiVersion"
                )
        return plain

    def convert(self, kind: Kind | str, obj: Obj, source: str, target: str) -> Obj:
        """Return ``obj`` (of version ``source``) converted to ``target``.

        The converter receives ``obj`` itself: callers that must keep it pristine pass a
        copy (the ``no_mutation`` property relies on this).

        Raises:
            ConverterError: the converter raised or returned something unusable.
        """
        k = self.kind(kind) if isinstance(kind, str) else kind
        if source == target:
            return obj
        out: Obj = self._converters.convert(
            obj, source, target, label=k.name, hub=self.hub_for(k), target=k.api_version,
            check=lambda out, a, b: self._checked(k, out, a, b))
        return out

    @property
    def converter(self) -> Converter:
        """The API's converter (``_converter.Converter``): its Python functions, or the
        user's webhook, or any other kind."""
        return self._converters

    def default(self, kind: Kind | str, version: str, obj: Obj) -> Obj:
        """Return ``obj`` with ``version``'s defaulter applied (unchanged if none)."""
        k = self.kind(kind) if isinstance(kind, str) else kind
        fn = self._defaulters.get(version)
        if fn is None:
            return obj
        out = call_user(fn, (obj,), f"{self.name}: defaulter for {k.name} {version}")
        out = obj if out is None else out
        if not isinstance(out, dict):
            raise ConverterError(
                f"{self.name}: defaulter for {k.name} {version} returned "
                f"{type(out).__name__}, expected a dict or None"
            )
        plain: Obj = plain_json(out, f"{self.name}: defaulter for {k.name} {version}")
        return plain

    def __repr__(self) -> str:
        kinds = ", ".join(f"{k.name}({'/'.join(k.versions)})" for k in self.kinds)
        return f"<API {self.name}: {kinds}>"


def _check_overrides(overrides: Any) -> Any:
    """``overrides`` (a :class:`compatfuzz.strategies.Overrides` or ``None``), refused
    with the fix when it is something else."""
    from compatfuzz.strategies import Overrides

    if overrides is not None and not isinstance(overrides, Overrides):
        raise InvalidArgument(
            f"Expected a compatfuzz.strategies.Overrides but got overrides={overrides!r} "
            f"(type={type(overrides).__name__}); write overrides=Overrides().path("
            '"spec.replicas", st.integers(1, 5))')
    return overrides
