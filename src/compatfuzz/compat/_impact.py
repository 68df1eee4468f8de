"""What each finding breaks for an object stored under OLD once NEW is installed.

"Breaking" alone does not tell a release manager what happens to the objects already in
a cluster. Since Kubernetes 1.30 (beta, on by default; GA in 1.33, KEP-4008) the API
server ratchets validation: on an update, an error in a value the update leaves
unchanged is a warning, not a refusal. So a tightened ``maximum`` breaks re-creating a
stored object (a restore, a delete-and-recreate, a GitOps sync to a fresh cluster) but
no update, while a new ``required`` field under ``spec`` breaks every update that
touches ``spec``. :func:`assess` names that :class:`~compatfuzz.compat.Impact` per
finding, with a one-line note naming the value whose change the server refuses.

Where an error sits, and whether ratcheting excuses it, follows the model the round-trip
checker already uses for unchanged updates (``compatfuzz.apiserver._validate``,
``update_errors`` and ``_ratcheted``, checked against a real kube-apiserver),
which reads upstream:

* apiextensions-apiserver ``pkg/apiserver/validation/ratcheting.go``
  (``ratchetingValueValidator.Validate``): a value's errors become warnings when the
  value is correlated with an old one and ``CachedDeepEqual`` to it. Correlation
  (k8s.io/apiserver ``pkg/cel/common/equality.go``, ``CorrelatedObject.Key``/``Index``)
  follows declared properties, map values, and the items of lists that are neither
  ``set`` nor ``atomic`` (``map`` lists by key); an uncorrelated item's errors rise to
  the nearest correlated value. The root is never equal to its old self (its
  ``metadata`` holds fields no schema declares), so an error that rises to it is never
  excused.
* ``required`` (and ``minProperties``, ``maxItems``, ...) is an error of the object or
  list holding it, so it is excused only while that whole value is unchanged: the real
  server took back Cluster API's ``spec.poolRef`` without a newly required ``apiGroup``
  when ``poolRef`` was untouched. The Kubernetes documentation's list of what
  is "not ratcheted" (``required``, quantors, ...) reads as "not at the level of the
  field itself", which is what the impact below says.
* ``allOf``/``anyOf``/``oneOf`` members are validated without ratcheting: their errors
  are the holding value's (apiextensions-apiserver
  ``pkg/apiserver/schema/cel/validation.go``: "mirror schema ratcheting behavior which
  does not ratchet allOf errors").
* CEL rules (``validation.go``, ``validateExpressions``): a false rule's error is
  excused when its value is unchanged, unless the rule uses ``oldSelf`` (a transition
  rule is never ratcheted: an update fails wherever the rule rejects ``oldSelf == self``).
* list-type ``set``/``map`` uniqueness is checked on update only when the stored object
  has no duplicates (``pkg/registry/customresource/strategy.go``, ``ValidateUpdate``:
  "ratcheting validation of x-kubernetes-list-type"), with or without ratcheting; a list
  or map type change still changes how server-side apply merges an update of it.
* a removed or renamed field, or content no longer preserved, is pruned: dropped when
  the object is read and lost at its next write, whatever the write changes
  (``pkg/apiserver/schema/pruning``); there is no error to ratchet.

A *loosening* (:attr:`~compatfuzz.compat.Finding.loosening`: a relaxed limit, an added
enum value, a field no longer required, a relaxed pattern, ...) refuses nothing OLD
accepted, so it is ``reads`` whatever ratcheting does: only old readers may break on what
new writers store. The default ``kubernetes`` policy lets it pass with a warning
(``compat/_profiles.py``).

Without ratcheting (``--kubernetes-version`` 1.29 or older, ``--no-assume-ratcheting``,
or a schema that is not a custom resource's) every update validates the whole object,
so each request-side validation change breaks every update of a stored object that
violates it.

A web API's schema (a pydantic model's, a Cadwyn version's) stores nothing: its findings
are judged in requests and responses instead (``compat/_rest.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from compatfuzz.compat._model import Finding, Impact, Side
from compatfuzz.compat._rest import is_rest
from compatfuzz.compat._rest import judge as judge_rest
from compatfuzz.schema import Schema

__all__ = ["assess", "ratcheting_for", "serves_ratcheting"]

#: the first release whose servers ratchet CRD validation by default (beta: KEP-4008)
FIRST_DEFAULT = (1, 30)
#: the first release with CEL ratcheting behind the alpha gate (alpha 2 of KEP-4008)
FIRST_GATE = (1, 29)

_SEGMENT = re.compile(r'\[[^\]]*\]|[^.\[]+')
_OLD_SELF = re.compile(r"\boldSelf\b")

# behaviour, not validation: nothing a write sends is refused
_READ_ONLY = frozenset({"default-added", "default-removed", "default-changed",
                        "default-missing-in-version"})
# the resource, version or document itself: no request reaches the stored object
_WHOLE = frozenset({"version-removed", "scope-changed", "definition-removed", "crd-invalid"})
# data dropped by pruning on read and at the next write
_PRUNED = frozenset({"field-removed", "field-renamed", "content-closed"})
# how server-side apply merges the value (uniqueness itself ratchets in strategy.go)
_MERGE = frozenset({"list-type-changed", "list-map-keys-changed", "map-type-changed"})
# the change is at the value holding a quantor: its error is that value's
_QUANTOR_RULES = frozenset({"union-branch-added", "union-branch-removed",
                            "wrapped-in-union", "unwrapped-from-union"})


def serves_ratcheting(version: tuple[int, int]) -> bool:
    """Whether a kube-apiserver of ``version`` ratchets CRD validation by default."""
    return version >= FIRST_DEFAULT


def ratcheting_for(schema: Schema | None) -> bool:
    """Whether validation ratcheting applies to ``schema`` at all: only a custom
    resource's schema (a CRD version's ``openAPIV3Schema``) is validated by the
    ratcheting validator; built-in kinds and plain JSON Schema / OpenAPI are not."""
    return schema is not None and isinstance(schema.meta.get("openapi"), Mapping)


def assess(f: Finding, new: Schema | None, *, ratcheting: bool = True,
           sides: frozenset[Side] | None = None) -> Finding:
    """Return ``f`` with its :attr:`~Finding.impact` and a one-line ``impact_note``.

    ``new`` is NEW's schema at the finding's version (``None`` for CRD-level findings);
    ``ratcheting`` says whether the API server ratchets validation (it applies only when
    ``new`` is a custom resource's schema, see :func:`ratcheting_for`). The finding's
    private search context (``context``) must still be attached: it says whether the
    change sits under an ``allOf``/``anyOf``/``oneOf``. A web API's ``new``
    (:func:`~compatfuzz.compat._rest.is_rest`) is judged by ``_rest.judge``, on the
    ``sides`` that matter at the finding's path (the direction's; default: both): a
    response model's type change refuses no request.
    """
    if is_rest(new):
        impact, note = judge_rest(f if sides is None else f.evolve(breaks=f.breaks & sides))
        return f.evolve(impact=impact, impact_note=note)
    impact, note = _judge(f, new, ratcheting=ratcheting and ratcheting_for(new),
                          custom=new is None or ratcheting_for(new))
    return f.evolve(impact=impact, impact_note=note)


def _judge(f: Finding, new: Schema | None, *, ratcheting: bool, custom: bool
           ) -> tuple[Impact, str]:
    if f.rule in _READ_ONLY:
        return Impact.READS, ("no write fails; stored objects that omit the field read "
                              "back with a different default")
    if Side.REQUEST not in f.breaks:
        if f.loosening:
            return Impact.READS, ("a loosening: every write still succeeds; only old readers "
                                  "may break (clients built for OLD, a rollback to OLD) on "
                                  "what new writers store")
        if Side.RESPONSE in f.breaks:
            return Impact.READS, ("no write of a stored object fails; old clients may "
                                  "reject what they read")
        return Impact.NONE, "nothing changes for stored objects"
    if f.rule in _WHOLE:
        return Impact.ANY_UPDATE, ("stored objects can no longer be read or written "
                                   "where clients used to")
    if f.rule in _PRUNED:
        return Impact.ANY_UPDATE, (f"data at {f.path} is pruned: dropped when read and "
                                   "lost at the next write, whatever it changes")
    if f.rule in _MERGE:
        dups = ("; stored duplicates do not block updates (strategy.go skips the check "
                "for them)" if f.rule != "map-type-changed" else "")
        return Impact.UPDATE_FIELD, (f"an update of {f.path} merges differently "
                                     f"(server-side apply){dups}")
    if f.rule in ("unhandled", "witness-only"):
        return Impact.ANY_UPDATE, ("assumed the worst: no rule says where the server's "
                                   "error sits")
    if not ratcheting:
        why = "" if custom else "not a custom resource, so "
        return Impact.ANY_UPDATE, (f"{why}no validation ratcheting: every update validates "
                                   "the whole object, so a stored object that violates it "
                                   "cannot be updated")
    if f.rule == "validations-changed" and any(
            _OLD_SELF.search(str(r)) for r in f.new or ()):
        return Impact.ANY_UPDATE, ("a transition rule (oldSelf) is never ratcheted: an "
                                   "update fails wherever it rejects the stored value "
                                   "unchanged")
    ctx = f.context
    quantor = getattr(ctx, "quantor", None)
    path = "" if f.path == "$" else f.path
    holder = path
    if f.rule == "required-added":
        holder = _parent(path)  # a missing required field is its object's error
    elif f.rule in _QUANTOR_RULES:
        holder = path
    elif quantor is not None:
        holder = quantor
    raw = new.meta.get("openapi") if new is not None else None
    scope, node = _correlated(raw if isinstance(raw, Mapping) else None, holder)
    if f.rule == "nullable-changed":
        node = None  # the stored value is null: a leaf, whatever its type
    if not scope:
        return Impact.ANY_UPDATE, ("the error sits on the object's root, which ratcheting "
                                   "never excuses (its metadata always differs)")
    if scope == holder and not _container(node):
        return Impact.CREATE, (f"re-creating a stored object fails; updates pass while "
                               f"{_show(scope)} is unchanged (validation ratcheting)")
    return Impact.UPDATE_FIELD, (f"an update that changes {_show(scope)} fails unless it "
                                 "also fixes it; other updates pass (validation ratcheting)")


def _parent(path: str) -> str:
    parts = _SEGMENT.findall(path)
    return _join(parts[:-1])


def _join(parts: list[str]) -> str:
    out = ""
    for p in parts:
        out += p if p.startswith("[") else (f".{p}" if out else p)
    return out


def _show(path: str) -> str:
    return path or "the object"


def _container(node: Mapping[str, Any] | None) -> bool:
    if node is None:
        return False
    return (node.get("type") in ("object", "array") or "properties" in node
            or "items" in node or isinstance(node.get("additionalProperties"), Mapping))


def _correlated(root: Mapping[str, Any] | None, path: str
                ) -> tuple[str, Mapping[str, Any] | None]:
    """The nearest value at or above ``path`` the server correlates with its old self,
    and NEW's schema node at ``path`` (None where NEW declares nothing there).

    ``root`` is the CRD version's raw ``openAPIV3Schema`` (structural: no ``$ref``), the
    same the API-server model reads (``apiserver/_structural.py``). Declared properties
    and map values correlate; list items only when the list is neither ``set`` nor
    ``atomic`` (``CorrelatedObject.Index``, ``equality.go``; as ``_ratcheted`` in
    ``apiserver/_validate.py``). Without a schema only the path itself is known.
    """
    parts = _SEGMENT.findall(path)
    if root is None:
        return path, None
    node: Mapping[str, Any] | None = root
    scope: list[str] = []
    correlated = True
    for i, part in enumerate(parts):
        if node is None:
            break
        props = node.get("properties")
        props = props if isinstance(props, Mapping) else {}
        extra = node.get("additionalProperties")
        extra = extra if isinstance(extra, Mapping) else None
        items = node.get("items")
        if part == "[*]":
            if isinstance(items, Mapping):
                ok = node.get("x-kubernetes-list-type") not in ("set", "atomic")
                node = items
            elif extra is not None:
                ok, node = True, extra
            else:
                ok, node = False, None
        else:
            sub = props.get(_unquote(part))
            if sub is None:
                sub = extra
            ok, node = isinstance(sub, Mapping), sub if isinstance(sub, Mapping) else None
        correlated = correlated and ok
        if correlated:
            scope = parts[:i + 1]
    return _join(scope), node


def _unquote(part: str) -> str:
    if part.startswith("[") and part.endswith("]"):
        inner = part[1:-1]
        try:
            value: Any = json.loads(inner)
        except ValueError:
            return inner
        return str(value)
    return part
