"""Witnesses tried on a real kube-apiserver: ``compatfuzz diff --apiserver real``.

A witness is compatfuzz's claim that a value valid under OLD is rejected by NEW (or, on
the response side, the reverse). Here a real server judges it, as a cluster that upgrades
its CRD from OLD to NEW would. For each finding with a witness, on one control plane
for the whole run:

1. the CRD of the revision that takes the witness (OLD; NEW for a response-side one) is
   created under a group of its own (``w3.example.com``: no finding sees another's
   objects or CRD revision), and two objects are created in it: **A**, a full object
   (``apiVersion``, ``kind``, ``metadata.name``, the smallest value of every required
   field, from that revision's schema) carrying the witness at its path, and **B**, the
   same kind of object with another value there (valid under both revisions when the
   search finds one);
2. the CRD is replaced by the other revision, and we wait until the server *serves* it:
   each version carries a printer column named after the step, and a Table list shows
   it only once the server has rebuilt that CRD's serving info (the validator and the
   table converter are built together, ``getOrCreateServingInfoFor`` in
   ``k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_handler.go``), so no
   answer below comes from the old schema;
3. three requests, each answer recorded: **update (label only)** of A (validation
   ratcheting, GA in 1.33, lets unchanged invalid values through, except ``required``
   and what the KEP lists: ``k8s.io/apiextensions-apiserver/pkg/registry/customresource/
   strategy.go`` ``ValidateUpdate``), **update the field** (B's value at the path
   replaced by the witness: an update that touches the field) and **create again** (A
   under a new name: full validation, what a restore or a GitOps re-sync does).

The verdict: ``confirmed`` when the server refuses the create again naming the finding's
field (or accepts it but drops the witness's data: a pruning finding), ``not-confirmed``
when it takes the witness whole, or refuses it under OLD already (the finding or the
witness is wrong, and that is the news), ``inconclusive`` when it refuses it for other
fields only (a witness that breaks more than its finding: a CEL rule is then not even
evaluated), ``not-run`` when the server refuses NEW as an update of OLD (a removed
stored version, a scope change) or the object cannot be built.

A ``version-removed`` finding has no witness; its trial is an object of OLD created in
the removed version, then, once the CRD is NEW, read in it and in NEW's storage version
and created again in it (``confirmed`` when the server no longer serves it; ``not-run``
when it refuses NEW as an update because the version is in ``status.storedVersions``).

The CRDs are the user's own versions and schemas, without subresources (``status`` is
then written on the main endpoint, so a status witness can be tried), printer columns
or conversion webhook (``None``: versions differ only by name here).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import json
import random
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.apiserver._real._backend import CRDRefused, RealKind, crd_document, install
from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.compat._engine import Revision
from compatfuzz.compat._model import Finding, ServerAnswer, ServerCheck, Side
from compatfuzz.compat._witness import (
    _MISSING,
    _deref,
    _error_path,
    _first_dropped,
    _known,
    _one_value,
    _settings,
    _size,
    prune,
)
from compatfuzz.errors import CompatfuzzError, InvalidArgument
from compatfuzz.schema import CRD, Schema

__all__ = ["CONFIRMED", "INCONCLUSIVE", "NOT_CONFIRMED", "NOT_RUN", "STEPS", "ServerLost",
           "check_installable", "check_revisions", "confirm", "control_plane", "place",
           "server_version"]

CONFIRMED, NOT_CONFIRMED, NOT_RUN = "confirmed", "not-confirmed", "not-run"
INCONCLUSIVE = "inconclusive"
#: the three requests made after the CRD is replaced, in order
STEPS = ("update (label only)", "update the field", "create again")
#: how long a CRD revision may take to be served
SERVE_TIMEOUT = 60.0
_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
_LABEL = "compatfuzz.io/touched"
_groups = itertools.count(1)


class ServerLost(CompatfuzzError):
    """The connection to kube-apiserver broke in the middle of the run."""


@contextmanager
def control_plane(*, assets_dir: str | Path | None = None, start_timeout: float = 90.0
                  ) -> Iterator[Client]:
    """Start etcd and kube-apiserver (found as envtest finds them), yield a client, and
    stop both (removing their files) however the block is left.

    Raises:
        MissingAssets: no binaries (the message says how to get them).
        StartError: a process did not become ready (with the tail of its log).
    """
    from compatfuzz.apiserver._real._assets import find_assets
    from compatfuzz.apiserver._real._process import ControlPlane

    assets = find_assets(folder=None if assets_dir is None else str(assets_dir))
    plane = ControlPlane(assets, start_timeout=start_timeout)
    endpoint = plane.start()
    client = Client(endpoint)
    try:
        yield client
    finally:
        client.close()
        plane.stop()


def server_version(client: Client) -> str:
    """The server's ``gitVersion`` (``v1.37.2``)."""
    answer = client.request("GET", "/version")
    return str((answer or {}).get("gitVersion") or "unknown")


def check_revisions(old: Revision, new: Revision) -> None:
    """Raise :class:`InvalidArgument` unless both revisions are whole CRDs."""
    _crds(old, new)


def _crds(old: Revision, new: Revision) -> tuple[CRD, CRD]:
    if old.crd is None or new.crd is None:
        raise InvalidArgument(
            f"--apiserver real tries witnesses on a real kube-apiserver, which serves whole "
            f"CRDs, but {old.label if old.crd is None else new.label} is not one (a single "
            "schema, or FILE@VERSION)\n  fix: give two CRD files (FILE or FILE#NAME, without "
            "@VERSION), or drop --apiserver")
    return old.crd, new.crd


def _document(crd: CRD, group: str, tag: str | None = None) -> dict[str, Any]:
    """The CRD to install: ``crd``'s versions and raw schemas under ``group``, with a
    printer column named ``tag`` in each version (see the module docstring)."""
    versions = {v.name: v.schema.meta["openapi"] for v in crd.versions
                if v.schema is not None and "openapi" in v.schema.meta}
    storage = crd.storage_version or next(iter(versions))
    doc = crd_document(group=group, kind=crd.kind, plural=crd.plural, scope=crd.scope,
                       versions=versions, storage=storage, webhook_url=None, ca_bundle=None)
    # a version the file serves no more (``served: false``) stays unserved: that is what
    # a version-removed finding of a deprecated version is about
    served = {v.name: v.served for v in crd.versions}
    for v in doc["spec"]["versions"]:
        v["served"] = served.get(v["name"], True)
    if tag is not None:
        for v in doc["spec"]["versions"]:
            v["additionalPrinterColumns"] = [
                {"name": tag, "type": "string", "jsonPath": ".metadata.name"}]
    return doc


def check_installable(client: Client, old: Revision, new: Revision) -> None:
    """Install OLD and NEW once each (groups ``oldN.GROUP``, ``newN.GROUP``), so a CRD the
    server refuses stops the run before any finding is tried.

    Raises:
        CRDRefused: the server refuses one of them (its message says why).
        InvalidArgument: a revision is not a whole CRD.
    """
    for revision, crd, prefix in zip((old, new), _crds(old, new), ("old", "new"),
                                     strict=True):
        probe = f"{prefix}{next(_groups)}.{crd.group}"
        try:
            install(client, _document(crd, probe), source=revision.label,
                    timeout=SERVE_TIMEOUT)
        except CRDRefused as exc:  # name the user's CRD, not the probe's group
            raise CRDRefused(str(exc).replace(probe, crd.group)) from None


# -- placing a witness into a whole object ---------------------------------------------

def _segments(path: str) -> list[str]:
    return re.findall(r'\[[^\]]*\]|[^.\[]+', "" if path in ("", "$") else path)


def _key(seg: str) -> str | None:
    """The property name of a path segment; ``None`` for ``[*]`` (any item or key)."""
    if seg == "[*]":
        return None
    if seg.startswith("["):
        try:
            name = json.loads(seg[1:-1])
        except ValueError:
            return seg[1:-1]
        return str(name)
    return seg


def _get(value: Any, segs: list[str]) -> Any:
    """The value at ``segs`` (the first item or key for ``[*]``), or ``_MISSING``."""
    for seg in segs:
        name = _key(seg)
        if name is None:
            if isinstance(value, list) and value:
                value = value[0]
            elif isinstance(value, dict) and value:
                value = next(iter(value.values()))
            else:
                return _MISSING
        elif isinstance(value, dict) and name in value:
            value = value[name]
        else:
            return _MISSING
    return value


def place(schema: Schema, node: Any, current: Any, segs: list[str], leaf: Any, *,
          seed: int = 0) -> Any:
    """``current`` with ``leaf`` at ``segs``: containers that are missing are created as
    the smallest value of their schema (its required fields filled), ``[*]`` is the
    first item of a list or the first key of a map (``"key"`` when there is none)."""
    if not segs:
        return copy.deepcopy(leaf)
    n = _deref(schema, node)
    seg, rest = segs[0], segs[1:]
    name = _key(seg)

    def fill(child: Any, have: Any) -> Any:
        if have is not _MISSING or not rest:
            return have
        made = _one_value(schema, child, seed)
        return {} if made is _MISSING else made

    if name is None and (isinstance(n.get("items"), Mapping) or n.get("type") == "array"):
        items = n.get("items") if isinstance(n.get("items"), Mapping) else {}
        out = list(current) if isinstance(current, list) else []
        first = out[0] if out else _MISSING
        child = place(schema, items, fill(items, first), rest, leaf, seed=seed)
        return [child, *out[1:]]
    out_map = dict(current) if isinstance(current, dict) else {}
    if name is None:
        addl = n.get("additionalProperties")
        child_node = addl if isinstance(addl, Mapping) else {}
        name = next(iter(out_map), "key")
    else:
        props, addl, _ = _known(schema, n)
        child_node = props.get(name, addl if isinstance(addl, Mapping) else {})
    limit = n.get("maxProperties")
    if isinstance(limit, int) and name not in out_map:
        # a one-of-N object (``maxProperties: 1``, external-secrets' provider): the
        # witness's field replaces a sibling the smallest value chose
        keep = set(n.get("required") or ())
        for other in [k for k in out_map if k not in keep]:
            if len(out_map) < limit:
                break
            del out_map[other]
    out_map[name] = place(schema, child_node, fill(child_node, out_map.get(name, _MISSING)),
                          rest, leaf, seed=seed)
    return out_map


def _find(schema: Schema, predicate: Any, budget: int, seed: int) -> Any:
    """The smallest object of ``schema`` meeting ``predicate``, or ``_MISSING``."""
    from hypothesis import find

    from compatfuzz.strategies import from_schema

    try:
        return find(from_schema(schema), predicate, settings=_settings(budget),
                    random=random.Random(seed))
    except Exception:  # nothing found, or no value can be drawn: the caller falls back
        return _MISSING


def _valid(schema: Schema, obj: Any) -> bool:
    try:
        return schema.is_valid(prune(schema, schema.root, obj))
    except RecursionError:
        return False


@dataclass
class _Trial:
    index: int
    finding: Finding
    writer: CRD  # the revision that takes the witness
    reader: CRD  # the revision that judges it
    version: str
    group: str
    a: dict[str, Any] | None = None  # the object holding the witness
    b: dict[str, Any] | None = None  # another value at the path (for "update the field")
    # where compatfuzz's model of the writer finds A invalid ([] if it takes it)
    a_errors: list[str] = field(default_factory=list)
    answers: list[ServerAnswer] = field(default_factory=list)
    verdict: str = ""
    note: str = ""
    removed: bool = False  # a version-removed finding: no witness, the version itself

    def served(self, crd: CRD) -> str:
        """The version to list ``crd``'s objects in: the trial's, unless ``crd`` no
        longer has it (then its storage version)."""
        names = {v.name for v in crd.versions if v.served}
        return self.version if self.version in names else (crd.storage_version
                                                            or self.version)

    @property
    def segs(self) -> list[str]:
        assert self.finding.witness is not None
        return _segments(self.finding.witness.path)

    def stop(self, verdict: str, note: str) -> None:
        if not self.verdict:
            self.verdict, self.note = verdict, note


def _bare(obj: Any) -> dict[str, Any]:
    """``obj`` without what the server owns or we set (``apiVersion``, ``kind``,
    ``metadata``)."""
    out: dict[str, Any] = dict(obj) if isinstance(obj, dict) else {}
    for key in ("apiVersion", "kind", "metadata"):
        out.pop(key, None)
    return out


def _pool(writer: Schema, reader: Schema, budget: int, seed: int) -> list[dict[str, Any]]:
    """Up to 16 objects valid under both revisions, drawn from the writer's schema,
    smallest first: the B of every finding of one version and side comes from here (one
    search per version, not one per finding)."""
    from hypothesis import HealthCheck, Phase, find, settings

    from compatfuzz.strategies import from_schema

    found: list[dict[str, Any]] = []

    def collect(value: Any) -> bool:
        obj = _bare(value)
        if _valid(writer, obj) and _valid(reader, obj):
            found.append(obj)
        return len(found) >= 16

    # fewer than 16, or nothing can be drawn: what was found serves
    with contextlib.suppress(Exception):
        find(from_schema(writer), collect, random=random.Random(seed), settings=settings(
            max_examples=budget, phases=[Phase.generate], database=None, deadline=None,
            suppress_health_check=list(HealthCheck)))
    return sorted(found, key=_size)


def _objects(trial: _Trial, seed: int, budget: int,
             pools: dict[tuple[int, int], list[dict[str, Any]]]) -> None:
    """Build A (the witness in a whole object) and B (another value at its path)."""
    witness = trial.finding.witness
    assert witness is not None
    wv, rv = trial.writer.version(trial.version), trial.reader.version(trial.version)
    writer, reader = wv.schema, rv.schema
    assert writer is not None and reader is not None
    segs = trial.segs

    def holding(base: Any) -> Any:
        return place(writer, writer.root, _bare(base), segs, witness.value, seed=seed)

    base = _one_value(writer, writer.root, seed)
    a = holding(base)
    if not _valid(writer, a):  # a rule across fields: search a base that takes it
        found = _find(writer, lambda b: _valid(writer, holding(b)), budget, seed)
        if found is not _MISSING:
            base, a = found, holding(found)
    trial.a = a
    trial.a_errors = [_error_path(e.absolute_path) for e in
                      writer.validator.iter_errors(prune(writer, writer.root, a))]

    def differs(b: Any) -> bool:
        return bool(_get(_bare(b), segs) != witness.value)

    key = (id(writer), id(reader))
    if key not in pools:
        pools[key] = _pool(writer, reader, budget, seed)
    # valid under both revisions, with the field's parent there: B's own errors must
    # not be what the server refuses when the update touches the field
    ranked = ([b for b in pools[key] if differs(b) and _get(b, segs[:-1]) is not _MISSING]
              + [b for b in pools[key] if differs(b)]
              + ([_bare(base)] if base is not _MISSING and differs(base) else []))
    trial.b = ranked[0] if ranked else None


# -- the requests ---------------------------------------------------------------------

def _kind(client: Client, trial: _Trial) -> RealKind:
    return RealKind(client, group=trial.group, plural=trial.writer.plural,
                    namespaced=trial.writer.scope == "Namespaced",
                    storage=trial.writer.storage_version or trial.version)


def _object(kind: RealKind, trial: _Trial, body: dict[str, Any], name: str
            ) -> dict[str, Any]:
    obj = {**body, "apiVersion": f"{trial.group}/{trial.version}",
           "kind": trial.writer.kind}
    return kind.prepare(obj, name)


def _send(step: str, call: Any, sent: dict[str, Any]) -> ServerAnswer:
    """One request: refused (the server's message) or accepted (naming a field the
    server dropped from what was sent, if any)."""
    try:
        answer = call()
    except ServerError as exc:
        fields = []
        details = exc.status.get("details")
        for cause in (details.get("causes") if isinstance(details, dict) else None) or []:
            if isinstance(cause, dict) and cause.get("field") not in (None, "", "<nil>"):
                fields.append(str(cause["field"]))
        return ServerAnswer(step, False, exc.explanation(), tuple(fields))
    dropped = _first_dropped(sent, answer)
    return ServerAnswer(step, True, f"dropped {dropped}" if dropped else "")


def _name(trial: _Trial, what: str) -> str:
    return f"w{trial.index}-{what}"


def _serve(client: Client, trials: list[_Trial], docs: Mapping[int, dict[str, Any]],
           tag: str) -> None:
    """Wait until every trial's CRD is served with the printer column ``tag``."""
    waiting = {t.index: t for t in trials if t.index in docs and not t.verdict}
    crds = {t.index: (t.writer if tag == "writer" else t.reader) for t in waiting.values()}
    deadline = time.monotonic() + SERVE_TIMEOUT
    while waiting:
        for index, trial in list(waiting.items()):
            ns = (f"/namespaces/{client.endpoint.namespace}"
                  if trial.writer.scope == "Namespaced" else "")
            path = (f"/apis/{trial.group}/{trial.served(crds[index])}{ns}/"
                    f"{trial.writer.plural}?limit=1")
            try:
                table = client.request("GET", path, accept=_TABLE)
            except ServerError as exc:
                if exc.code in (404, 503):
                    continue
                raise
            columns = [c.get("name") for c in (table or {}).get("columnDefinitions") or []]
            if f"{tag}-{index}" in columns:
                del waiting[index]
        if not waiting:
            return
        if time.monotonic() > deadline:
            for trial in waiting.values():
                trial.stop(NOT_RUN, f"the server did not serve the {tag} CRD within "
                           f"{SERVE_TIMEOUT:g} s")
            return
        time.sleep(0.05)


def _create_crds(client: Client, trials: list[_Trial]) -> None:
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    docs = {}
    for t in trials:
        doc = _document(t.writer, t.group, f"writer-{t.index}")
        try:
            client.request("POST", path, doc)
        except ServerError as exc:
            t.stop(NOT_RUN, f"the server refuses the CRD: {exc.explanation()}")
            continue
        docs[t.index] = doc
    _serve(client, trials, docs, "writer")


def _replace_crds(client: Client, trials: list[_Trial]) -> None:
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    docs = {}
    for t in trials:
        if t.verdict:
            continue
        doc = _document(t.reader, t.group, f"reader-{t.index}")
        name = doc["metadata"]["name"]
        try:
            current = client.request("GET", f"{path}/{name}")
            doc["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            client.request("PUT", f"{path}/{name}", doc)
        except ServerError as exc:
            t.stop(NOT_RUN, f"the server refuses {_rev(t, 'reader')} as an update of "
                   f"{_rev(t, 'writer')}: {exc.explanation()}")
            continue
        docs[t.index] = doc
    _serve(client, trials, docs, "reader")


def _rev(trial: _Trial, who: str) -> str:
    request = trial.finding.witness is None or trial.finding.witness.side is Side.REQUEST
    return ("OLD" if request else "NEW") if who == "writer" else ("NEW" if request else "OLD")


def confirm(old: Revision, new: Revision, findings: Iterable[Finding], client: Client, *,
            seed: int = 0, budget: int = 50, version: str = "") -> tuple[Finding, ...]:
    """``findings``, each one with a witness (and each ``version-removed`` one) carrying
    what ``client``'s server answered (:class:`~compatfuzz.compat._model.ServerCheck`);
    the others unchanged.

    ``budget`` bounds the search for a base object that takes the witness (a rule across
    fields) and for B. ``version`` is the server's, recorded in each check.

    Raises:
        InvalidArgument: a revision is not a whole CRD.
        ServerError: the server failed a request in a way no finding explains (a 5xx).
    """
    ocrd, ncrd = _crds(old, new)
    findings = tuple(findings)
    trials: list[_Trial] = []
    pools: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for i, f in enumerate(findings):
        w = f.witness
        if f.rule == "version-removed" and w is None:
            trial = _removed_trial(f, ocrd, ncrd, seed + i)
            if trial is not None:
                trials.append(trial)
            continue
        if w is None:
            continue
        writer, reader = (ocrd, ncrd) if w.side is Side.REQUEST else (ncrd, ocrd)
        versions = {v.name for v in ocrd.versions} & {v.name for v in ncrd.versions}
        if f.version not in versions:
            continue
        number = next(_groups)  # unique on the server across calls: w1, w2, ...
        trial = _Trial(number, f, writer, reader, f.version, f"w{number}.{ocrd.group}")
        try:
            _objects(trial, seed + i, budget, pools)
        except CompatfuzzError as exc:
            trial.stop(NOT_RUN, f"no whole object could hold the witness: {exc}")
        trials.append(trial)
    if trials:
        client.close()  # idle while the objects were built: the server may have hung up
        _run(client, trials)
    by_finding = {id(t.finding): t for t in trials}
    out = []
    for f in findings:
        t = by_finding.get(id(f))
        if t is None:
            out.append(f)
            continue
        out.append(f.evolve(server=ServerCheck(t.verdict or NOT_RUN, tuple(t.answers),
                                               t.note, version)))
    return tuple(out)


def _removed_trial(f: Finding, ocrd: CRD, ncrd: CRD, seed: int) -> _Trial | None:
    """A trial of a served version NEW removes: an object of OLD in that version is
    created, then read and created again in it once the CRD is NEW."""
    old_versions = {v.name: v for v in ocrd.versions if v.served and v.schema is not None}
    gone = old_versions.get(f.version)
    if gone is None or gone.schema is None or f.version in {
            v.name for v in ncrd.versions if v.served}:
        return None
    number = next(_groups)
    trial = _Trial(number, f, ocrd, ncrd, f.version, f"w{number}.{ocrd.group}",
                   removed=True)
    value = _one_value(gone.schema, gone.schema.root, seed)
    trial.a = _bare(value) if value is not _MISSING else {}
    return trial


def _try_removed(t: _Trial, kind: RealKind) -> None:
    """After NEW: read the object in the removed version and in NEW's storage version,
    then create it again in the removed version."""
    storage = t.reader.storage_version or t.version
    for step, call in (
            (f"read as {t.version}", functools.partial(kind.get, _name(t, "a"), t.version)),
            (f"read as {storage}", functools.partial(kind.get, _name(t, "a"), storage))):
        try:
            call()
        except ServerError as exc:
            t.answers.append(ServerAnswer(step, False, exc.explanation()))
        else:
            t.answers.append(ServerAnswer(step, True))
    again = _object(kind, t, t.a or {}, _name(t, "again"))
    t.answers.append(_send(f"create again as {t.version}",
                           functools.partial(kind.create, again, t.version), again))
    if t.answers[1].accepted and t.answers[-1].accepted:
        t.stop(NOT_CONFIRMED, f"the server still serves {t.version} once the CRD is NEW")
    else:
        t.stop(CONFIRMED, "")


def _run(client: Client, trials: list[_Trial]) -> None:
    _create_crds(client, trials)
    for t in trials:  # A and B under the revision that takes the witness
        if t.verdict or t.a is None:
            t.stop(NOT_RUN, "no whole object could hold the witness")
            continue
        kind = _kind(client, t)
        sent = _object(kind, t, t.a, _name(t, "a"))
        made = _send(f"create under {_rev(t, 'writer')}",
                     functools.partial(kind.create, sent, t.version), sent)
        t.answers.append(made)
        if t.removed and not made.accepted:
            t.stop(NOT_RUN, f"the server refuses OLD's smallest object in {t.version}")
            continue
        wpath = _segments(t.finding.witness.path if t.finding.witness else "")
        blamed = [p for p in t.a_errors
                  if _norm(p)[:len(wpath)] == [_key(x) or "[*]" for x in wpath]]
        if not made.accepted and t.a_errors and not blamed:
            t.stop(NOT_RUN, f"no whole object that compatfuzz's model of "
                   f"{_rev(t, 'writer')} takes could hold the witness, and the server "
                   "refused the one tried")
            continue
        if not made.accepted:
            t.stop(NOT_CONFIRMED, f"the server refuses the witness under "
                   f"{_rev(t, 'writer')} already: compatfuzz's model of "
                   f"{_rev(t, 'writer')} and the server disagree")
            continue
        if t.b is not None:
            other = _object(kind, t, t.b, _name(t, "b"))
            try:
                kind.create(other, t.version)
            except ServerError as exc:
                t.b = None
                t.note = f"B (another value at the path) refused: {exc.explanation()}"
    _replace_crds(client, trials)
    for t in trials:
        if t.verdict:
            continue
        kind = _kind(client, t)
        if t.removed:
            _try_removed(t, kind)
            continue
        try:
            a = kind.get(_name(t, "a"), t.version)
        except ServerError as exc:  # a stored object NEW cannot serve: that is the answer
            t.answers.append(ServerAnswer(f"read under {_rev(t, 'reader')}", False,
                                          exc.explanation()))
            t.stop(NOT_RUN, f"the server cannot read the object stored under "
                   f"{_rev(t, 'writer')} once the CRD is {_rev(t, 'reader')}")
            continue
        meta = dict(a.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), _LABEL: "label"}
        touched = {**a, "metadata": meta}
        # dropped: against A as first sent, since a read under NEW prunes already
        t.answers.append(_send(STEPS[0], functools.partial(kind.update, touched, t.version),
                               _object(kind, t, t.a or {}, _name(t, "a"))))
        if t.b is not None:
            try:
                b = kind.get(_name(t, "b"), t.version)
            except ServerError as exc:
                b = None
                t.answers.append(ServerAnswer(STEPS[1], False, "not run: B cannot be read: "
                                              + exc.explanation()))
        if t.b is not None and b is not None:
            schema = t.writer.version(t.version).schema
            assert schema is not None and t.finding.witness is not None
            changed = place(schema, schema.root, b, t.segs, t.finding.witness.value)
            t.answers.append(_send(STEPS[1], functools.partial(kind.update, changed, t.version),
                                   changed))
        again = _object(kind, t, t.a or {}, _name(t, "again"))
        last = _send(STEPS[2], functools.partial(kind.create, again, t.version),
                     again)
        t.answers.append(last)
        if last.accepted and last.message.startswith("dropped"):
            t.stop(CONFIRMED, t.note)  # data loss: the pruning finding's whole claim
        elif last.accepted:
            t.stop(NOT_CONFIRMED, "the server accepted the witness on create again: the "
                   "finding or its witness is wrong")
        elif _names(t.finding, last):
            t.stop(CONFIRMED, t.note)
        else:
            named = ", ".join(dict.fromkeys(last.fields)) or "no field"
            t.stop(INCONCLUSIVE, f"the server refused the witness, but for {named}, not "
                   f"{t.finding.path}" + (": it did not check its CEL rules, the object "
                                          "being invalid otherwise" if _UNCHECKED
                                          in last.message else ""))


#: what kube-apiserver adds when schema errors kept it from evaluating CEL rules
#: (``hasBlockingErr`` in ``k8s.io/apiextensions-apiserver/pkg/registry/customresource/
#: strategy.go``; its cause has no field: ``<nil>``)
_UNCHECKED = "some validation rules were not checked"


def _norm(path: str) -> list[str]:
    """A field path as segments, list indexes as ``[*]`` (``spec.items[0].x`` is
    ``spec.items[*].x``), names in brackets as plain names."""
    out = []
    for seg in _segments(re.sub(r"\[\d+\]", "[*]", path)):
        name = _key(seg)
        out.append("[*]" if name is None else name)
    return out


def _names(f: Finding, answer: ServerAnswer) -> bool:
    """Whether the server's refusal is about ``f``: one of its field errors is at the
    finding's path or the witness's (``[*]`` matching any key or index); for a CEL rule
    (whose ``fieldPath`` may point lower), below the rule's path when its rules ran."""
    wanted = [_norm(f.path)] + ([_norm(f.witness.path)] if f.witness is not None else [])
    for field_path in answer.fields:
        got = _norm(field_path)
        for want in wanted:
            if len(got) < len(want) or not all(
                    w == g or "[*]" in (w, g) for w, g in zip(want, got, strict=False)):
                continue
            if len(got) == len(want) or (f.rule == "validations-changed"
                                         and _UNCHECKED not in answer.message):
                return True
    return False
