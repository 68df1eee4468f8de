"""Breaking changes between two revisions of a protobuf API, under Envoy's versioning policy.

The rules are those of Envoy's ``api/API_VERSIONING.md`` ("Backwards compatibility"): no
renumbering, no type change, no field or package rename, no singular -> repeated, no
wrapping in a ``oneof``, no stricter protoc-gen-validate rules; additions are allowed.
Rule ids name the buf rule they mirror where one exists (``FIELD_SAME_NAME``...), so a
``buf breaking`` user can map them. Exceptions (``vNalpha`` packages, work-in-progress
status annotations) are applied as ignores with the reason, so they stay visible and
``--no-envoy-exceptions`` turns them off.

Findings, severities, ignore files, events and exit codes are compat's
(:mod:`compatfuzz.compat`); only the rules and the witness search are protobuf's. A finding
is ``confirmed`` when :mod:`._witness` finds a JSON/YAML config or binary message that OLD
accepts and NEW rejects or reads differently; rules about generated code and gRPC paths
(oneof wrapping with no sibling, services) cannot be shown on data and stay
``not-checked``, as compat's behavioural rules do.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from compatfuzz.compat import (
    Direction,
    Finding,
    FindingEvent,
    Finished,
    Note,
    PairStarted,
    Policy,
    Rule,
    Severity,
    Side,
    Started,
    Status,
    Witness,
)
from compatfuzz.errors import InvalidArgument
from compatfuzz.protobuf._load import ProtoSchema, load_protos
from compatfuzz.protobuf._options import is_work_in_progress
from compatfuzz.protobuf._validate import rules_of
from compatfuzz.protobuf._witness import Break, any_break, caused_by, naming_rule, search

__all__ = ["PROTO_RULES", "ProtoReport", "check_protos", "diff_protos"]

BOTH = frozenset({Side.REQUEST, Side.RESPONSE})
NONE: frozenset[Side] = frozenset()
_ALPHA = re.compile(r"(^|\.)v\d+alpha\d*$")


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {r.id: r for r in rules}


PROTO_RULES: Mapping[str, Rule] = _rules(
    Rule("proto-package-removed", "a package was removed or renamed (type URLs and gRPC "
         "paths change; buf PACKAGE_NO_DELETE)"),
    Rule("proto-message-removed", "a message was removed or renamed (its Any type URL "
         "stops resolving; buf MESSAGE_NO_DELETE)"),
    Rule("proto-enum-removed", "an enum was removed (buf ENUM_NO_DELETE)", behavioural=True),
    Rule("proto-field-removed", "a field was removed (configs setting it are rejected; "
         "buf FIELD_NO_DELETE)"),
    Rule("proto-field-renumbered", "a field kept its name under a new number (binary "
         "breaks; Envoy: no renumbering)"),
    Rule("proto-field-renamed", "a field number kept, its name changed (JSON/YAML "
         "breaks; buf FIELD_SAME_NAME)"),
    Rule("proto-field-json-name-changed", "a field's json_name changed (buf "
         "FIELD_SAME_JSON_NAME)"),
    Rule("proto-field-type-changed", "a field's type changed (buf FIELD_SAME_TYPE)"),
    Rule("proto-field-singular-to-repeated", "a singular field became repeated (the "
         "JSON shape changes; buf FIELD_SAME_CARDINALITY)"),
    Rule("proto-field-repeated-to-singular", "a repeated field became singular (buf "
         "FIELD_SAME_CARDINALITY)"),
    Rule("proto-field-presence-changed", "explicit presence (optional) was added or "
         "dropped (buf FIELD_SAME_CARDINALITY)"),
    Rule("proto-field-wrapped-in-oneof", "an existing field was moved into a oneof (Envoy: "
         "breaking for generated code; buf FIELD_SAME_ONEOF)"),
    Rule("proto-field-oneof-changed", "a field left its oneof or moved to another (buf "
         "FIELD_SAME_ONEOF)"),
    Rule("proto-field-default-changed", "a proto2 default changed (buf FIELD_SAME_DEFAULT)",
         behavioural=True),
    Rule("proto-enum-value-removed", "an enum value was removed (buf ENUM_VALUE_NO_DELETE)"),
    Rule("proto-enum-value-renamed", "an enum number kept, its name changed (JSON/YAML "
         "breaks; buf ENUM_VALUE_SAME_NAME)"),
    Rule("proto-enum-value-renumbered", "an enum value kept its name under a new number"),
    Rule("proto-validate-tightened", "a protoc-gen-validate / protovalidate rule got "
         "stricter (Envoy policy; buf has no rule for it)"),
    Rule("proto-validate-relaxed", "a validate rule got looser", Severity.INFO),
    Rule("proto-service-removed", "a service was removed (buf SERVICE_NO_DELETE)",
         behavioural=True),
    Rule("proto-rpc-removed", "an RPC was removed (buf RPC_NO_DELETE)", behavioural=True),
    Rule("proto-rpc-changed", "an RPC's request/response type or streaming changed (buf "
         "RPC_SAME_*)", behavioural=True),
    Rule("proto-package-added", "a package was added", Severity.INFO),
    Rule("proto-message-added", "a message was added", Severity.INFO),
    Rule("proto-field-added", "a field was added", Severity.INFO),
    Rule("proto-enum-value-added", "an enum value was added", Severity.INFO),
)

_TIGHTER_UP = ("gt", "gte", "min_len", "min_bytes", "min_items", "min_pairs", "len",
               "len_bytes")
_TIGHTER_DOWN = ("lt", "lte", "max_len", "max_bytes", "max_items", "max_pairs")
_FLAGS = ("required", "defined_only", "unique", "no_sparse", "email", "hostname", "ip",
          "ipv4", "ipv6", "uri", "uri_ref", "address", "uuid")
_LOOSENING_FLAGS = ("skip", "ignore_empty", "disabled", "ignored")


# -- element indexes -----------------------------------------------------------------------


@dataclass
class _Index:
    schema: ProtoSchema
    messages: dict[str, Descriptor] = field(default_factory=dict)
    enums: dict[str, EnumDescriptor] = field(default_factory=dict)
    services: dict[str, Any] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)
    file_of: dict[str, str] = field(default_factory=dict)
    wip_files: set[str] = field(default_factory=set)
    location: dict[str, tuple[str, list[int]]] = field(default_factory=dict)


def _index(schema: ProtoSchema) -> _Index:
    idx = _Index(schema)
    for fp in schema.root_files():
        fd = schema.pool.FindFileByName(fp.name)
        idx.packages.add(fp.package)
        if is_work_in_progress(fd.GetOptions()):
            idx.wip_files.add(fp.name)

        def walk(descs: Any, prefix: list[int], fp_name: str = fp.name) -> None:
            for i, m in enumerate(descs):
                if m.GetOptions().map_entry:
                    continue
                idx.messages[m.full_name] = m
                idx.file_of[m.full_name] = fp_name
                idx.location[m.full_name] = (fp_name, [*prefix, i])
                for j, f in enumerate(m.fields):
                    idx.location[f.full_name] = (fp_name, [*prefix, i, 2, j])
                for j, e in enumerate(m.enum_types):
                    idx.enums[e.full_name] = e
                    idx.file_of[e.full_name] = fp_name
                    idx.location[e.full_name] = (fp_name, [*prefix, i, 4, j])
                walk(m.nested_types, [*prefix, i, 3])

        walk(fd.message_types_by_name.values(), [4])
        for j, e in enumerate(fd.enum_types_by_name.values()):
            idx.enums[e.full_name] = e
            idx.file_of[e.full_name] = fp.name
            idx.location[e.full_name] = (fp.name, [5, j])
        for j, s in enumerate(fd.services_by_name.values()):
            idx.services[s.full_name] = s
            idx.file_of[s.full_name] = fp.name
            idx.location[s.full_name] = (fp.name, [6, j])
            for k, m in enumerate(s.methods):
                idx.location[m.full_name] = (fp.name, [6, j, 2, k])
    return idx


def _package(desc: Any) -> str:
    return str(desc.file.package)


def _type_label(f: FieldDescriptor) -> str:
    names = {v: k[len("TYPE_"):].lower() for k, v in vars(FieldDescriptor).items()
             if k.startswith("TYPE_")}
    if f.message_type is not None:
        if f.message_type.GetOptions().map_entry:
            k = f.message_type.fields_by_name["key"]
            v = f.message_type.fields_by_name["value"]
            return f"map<{_type_label(k)}, {_type_label(v)}>"
        return str(f.message_type.full_name)
    if f.enum_type is not None:
        return str(f.enum_type.full_name)
    return str(names.get(f.type, f.type))


def _is_map(f: FieldDescriptor) -> bool:
    return f.message_type is not None and f.message_type.GetOptions().map_entry


def _real_oneof(f: FieldDescriptor) -> str | None:
    o = f.containing_oneof
    if o is None:
        return None
    if len(o.fields) == 1 and o.name == "_" + f.name and f.has_presence:
        return None  # proto3 `optional`: a synthetic oneof
    return str(o.name)


# -- validate rule comparison --------------------------------------------------------------


def _flat(rules: Message | None, prefix: str = "") -> dict[str, Any]:
    """``{"uint32.lte": 10, "repeated.items.string.min_len": 1, ...}`` of a FieldRules."""
    out: dict[str, Any] = {}
    if rules is None:
        return out
    for fd, v in rules.ListFields():
        key = f"{prefix}{fd.name}"
        if isinstance(v, Message) and not fd.is_repeated and \
                fd.message_type.full_name not in ("google.protobuf.Duration",
                                                  "google.protobuf.Timestamp"):
            out.update(_flat(v, key + "."))
        elif fd.is_repeated:
            out[key] = [_plain(x) for x in v]
        else:
            out[key] = _plain(v)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, Message):
        if v.DESCRIPTOR.full_name in ("google.protobuf.Duration", "google.protobuf.Timestamp"):
            return int(v.seconds) * 10**9 + int(v.nanos)
        return str(v)
    if isinstance(v, bytes):
        return v.decode("latin-1")
    return v


_BOUNDS = ("gt", "gte", "lt", "lte")


def _bound(flat: dict[str, Any], prefix: str, keys: tuple[str, str]) -> tuple[Any, bool] | None:
    """``(value, exclusive)`` of the lower (``gt``/``gte``) or upper bound under prefix."""
    for k in keys:
        if f"{prefix}{k}" in flat:
            return flat[f"{prefix}{k}"], k in ("gt", "lt")
    return None


def _bound_changes(fo: dict[str, Any], fn: dict[str, Any]
                   ) -> list[tuple[str, Any, Any, bool]]:
    """Lower and upper bounds compared as bounds, so ``gt: 0`` -> ``gte: 0`` reads as
    looser, not as one bound dropped and a stricter one added. (An inverted pair, PGV's
    "outside the range", is compared key by key: rare, and the witness search judges.)"""
    prefixes = {k.rsplit(".", 1)[0] + "." for k in (*fo, *fn)
                if k.rsplit(".", 1)[-1] in _BOUNDS}
    out: list[tuple[str, Any, Any, bool]] = []
    for prefix in sorted(prefixes):
        for keys, sign in ((("gt", "gte"), 1), (("lt", "lte"), -1)):
            a, b = _bound(fo, prefix, keys), _bound(fn, prefix, keys)
            if a == b:
                continue
            label = prefix + "/".join(keys)
            if a is None or b is None:
                out.append((label, a and a[0], b and b[0], a is None))
                continue
            (va, xa), (vb, xb) = a, b
            try:
                stricter = (vb - va) * sign > 0 or (vb == va and xb and not xa)
            except TypeError:
                stricter = True
            out.append((label, ("exclusive " if xa else "") + str(va),
                        ("exclusive " if xb else "") + str(vb), stricter))
    return out


def _rule_change(key: str, old: Any, new: Any) -> bool | None:
    """True: NEW is stricter on this key; False: looser; None: unchanged."""
    if old == new:
        return None
    leaf = key.rsplit(".", 1)[-1]
    if leaf in _LOOSENING_FLAGS:  # turning these on checks less
        return bool(old) and not bool(new)
    if old is None:
        if leaf == "ignore":
            return False
        if leaf in _FLAGS:
            return bool(new)
        return True
    if new is None:
        if leaf in ("ignore_empty",):
            return True
        if leaf in _FLAGS:
            return not bool(old) and None
        return False
    if leaf in _TIGHTER_UP and leaf not in ("len", "len_bytes"):
        return bool(new > old)
    if leaf in _TIGHTER_DOWN:
        return bool(new < old)
    if leaf == "in":
        return not set(map(str, old)) <= set(map(str, new)) or bool(new and not old)
    if leaf == "not_in":
        return not set(map(str, new)) <= set(map(str, old))
    if leaf in _FLAGS:
        return bool(new) and not bool(old)
    if leaf == "ignore_empty":
        return bool(old) and not bool(new)
    return True  # const, pattern, prefix, len... changed: some old value may now fail


# -- the walk ------------------------------------------------------------------------------


@dataclass
class _Pair:
    old: ProtoSchema
    new: ProtoSchema
    oi: _Index
    ni: _Index

    def where(self, name: str, *, side: str = "new") -> str:
        idx = self.ni if side == "new" else self.oi
        loc = idx.location.get(name)
        return idx.schema.where(*loc) if loc else idx.file_of.get(name, "")


def _finding(rule: str, path: str, old: Any, new: Any, message: str, *, where: str = "",
             keyword: str = "", context: Any = None) -> Finding:
    breaking_rule = PROTO_RULES[rule].severity is Severity.ERROR
    return Finding(rule=rule, path=path, old=old, new=new, message=message,
                   breaks=BOTH if breaking_rule else NONE, definition=where,
                   keyword=keyword, context=context)


def static_findings(pair: _Pair) -> Iterator[Finding]:
    """Every rule of the policy, in file order; no witnesses yet."""
    oi, ni = pair.oi, pair.ni
    gone_packages = oi.packages - ni.packages
    for pkg in sorted(gone_packages):
        first = next((m for m in sorted(oi.messages) if _package(oi.messages[m]) == pkg), "")
        yield _finding("proto-package-removed", pkg, pkg, None,
                       f"package {pkg} is gone from NEW", where=pair.where(first, side="old"),
                       context=("any", first))
    for pkg in sorted(ni.packages - oi.packages):
        yield _finding("proto-package-added", pkg, None, pkg, f"package {pkg} is new")
    for name, om in sorted(oi.messages.items()):
        nm = ni.messages.get(name)
        if nm is None:
            if _package(om) not in gone_packages:
                yield _finding("proto-message-removed", name, name, None,
                               f"message {name} is gone from NEW",
                               where=pair.where(name, side="old"), context=("any", name))
            continue
        yield from _message_findings(pair, om, nm)
    for name in sorted(set(ni.messages) - set(oi.messages)):
        yield _finding("proto-message-added", name, None, name, f"message {name} is new",
                       where=pair.where(name))
    for name, oe in sorted(oi.enums.items()):
        ne = ni.enums.get(name)
        if ne is None:
            if _package(oe) not in gone_packages:
                yield _finding("proto-enum-removed", name, name, None,
                               f"enum {name} is gone from NEW",
                               where=pair.where(name, side="old"))
            continue
        yield from _enum_findings(pair, oe, ne)
    for name, os_ in sorted(oi.services.items()):
        ns = ni.services.get(name)
        if ns is None:
            if _package(os_) not in gone_packages:
                yield _finding("proto-service-removed", name, name, None,
                               f"service {name} is gone (its gRPC path /{name}/* too)",
                               where=pair.where(name, side="old"))
            continue
        for m in os_.methods:
            nmth = ns.methods_by_name.get(m.name)
            path = f"{name}.{m.name}"
            if nmth is None:
                yield _finding("proto-rpc-removed", path, m.name, None,
                               f"rpc {path} is gone", where=pair.where(path, side="old"))
                continue
            for attr in ("input_type", "output_type"):
                a, b = getattr(m, attr).full_name, getattr(nmth, attr).full_name
                if a != b:
                    yield _finding("proto-rpc-changed", path, a, b,
                                   f"rpc {path} {attr.replace('_', ' ')} changed",
                                   keyword=attr, where=pair.where(path))
            for attr in ("client_streaming", "server_streaming"):
                a2, b2 = getattr(m, attr, None), getattr(nmth, attr, None)
                if a2 != b2:
                    yield _finding("proto-rpc-changed", path, a2, b2,
                                   f"rpc {path} {attr.replace('_', ' ')} changed",
                                   keyword=attr, where=pair.where(path))


def _message_findings(pair: _Pair, om: Descriptor, nm: Descriptor) -> Iterator[Finding]:
    new_by_number = {f.number: f for f in nm.fields}
    new_by_name = {f.name: f for f in nm.fields}
    old_numbers = {f.number for f in om.fields}
    old_names = {f.name for f in om.fields}
    for of in om.fields:
        path = of.full_name
        nf = new_by_number.get(of.number)
        ctx = ("field", om.full_name, of.full_name)
        if nf is None:
            moved = new_by_name.get(of.name)
            if moved is not None:
                yield _finding("proto-field-renumbered", path, of.number, moved.number,
                               f"field {of.name} moved from number {of.number} to "
                               f"{moved.number}", where=pair.where(moved.full_name),
                               keyword="number", context=ctx)
            else:
                yield _finding("proto-field-removed", path, of.name, None,
                               f"field {of.name} = {of.number} is gone from NEW",
                               where=pair.where(path, side="old"), context=ctx)
            continue
        where = pair.where(nf.full_name)
        if nf.name != of.name:
            moved = new_by_name.get(of.name)
            if moved is not None:
                # the name lives on under another number, and this number means something
                # else now: JSON still reads, binary does not (Envoy: no renumbering)
                yield _finding("proto-field-renumbered", path, of.number, moved.number,
                               f"field {of.name} moved from number {of.number} to "
                               f"{moved.number}; {of.number} is now {nf.name}",
                               where=pair.where(moved.full_name), keyword="number",
                               context=ctx)
                continue
            yield _finding("proto-field-renamed", path, of.name, nf.name,
                           f"field {of.number} renamed {of.name} -> {nf.name}",
                           where=where, keyword="name", context=ctx)
        elif nf.json_name != of.json_name:
            yield _finding("proto-field-json-name-changed", path, of.json_name, nf.json_name,
                           f"json_name {of.json_name} -> {nf.json_name}", where=where,
                           keyword="json_name", context=ctx)
        ot, nt = _type_label(of), _type_label(nf)
        if of.is_repeated != nf.is_repeated and not (_is_map(of) or _is_map(nf)):
            rule = ("proto-field-singular-to-repeated" if nf.is_repeated
                    else "proto-field-repeated-to-singular")
            yield _finding(rule, path, "repeated" if of.is_repeated else "singular",
                           "repeated" if nf.is_repeated else "singular",
                           f"{of.name} became {'repeated' if nf.is_repeated else 'singular'}",
                           where=where, keyword="label", context=ctx)
        if ot != nt:
            yield _finding("proto-field-type-changed", path, ot, nt,
                           f"{of.name}: type {ot} -> {nt}", where=where, keyword="type",
                           context=ctx)
        elif (not of.is_repeated and not nf.is_repeated and of.message_type is None
              and of.has_presence != nf.has_presence
              and _real_oneof(of) is None and _real_oneof(nf) is None):
            yield _finding("proto-field-presence-changed", path,
                           "explicit" if of.has_presence else "implicit",
                           "explicit" if nf.has_presence else "implicit",
                           f"{of.name}: presence "
                           f"{'explicit' if of.has_presence else 'implicit'} -> "
                           f"{'explicit' if nf.has_presence else 'implicit'}",
                           where=where, keyword="presence", context=ctx)
        oo, no = _real_oneof(of), _real_oneof(nf)
        if oo != no:
            if oo is None:
                siblings = sorted(f.full_name for f in nf.containing_oneof.fields
                                  if f.number in old_numbers and f.number != nf.number)
                yield _finding("proto-field-wrapped-in-oneof", path, None, no,
                               f"{of.name} moved into oneof {no}"
                               + (f" with existing {', '.join(siblings)}" if siblings else ""),
                               where=where, keyword="oneof",
                               context=("oneof", om.full_name, of.full_name, siblings))
            else:
                yield _finding("proto-field-oneof-changed", path, oo, no,
                               f"{of.name} oneof {oo} -> {no}", where=where, keyword="oneof",
                               context=ctx)
        if of.has_default_value and nf.has_default_value and \
                of.default_value != nf.default_value:
            yield _finding("proto-field-default-changed", path, of.default_value,
                           nf.default_value, f"{of.name}: default changed", where=where,
                           keyword="default")
        yield from _validate_findings(pair, of, nf, where)
    for nf in nm.fields:
        if nf.number not in old_numbers and nf.name not in old_names:
            yield _finding("proto-field-added", nf.full_name, None, nf.name,
                           f"field {nf.name} = {nf.number} is new",
                           where=pair.where(nf.full_name))


def _validate_findings(pair: _Pair, of: FieldDescriptor, nf: FieldDescriptor, where: str
                       ) -> Iterator[Finding]:
    ro, rn = rules_of(of), rules_of(nf)
    fo, fn = _flat(ro[1] if ro else None), _flat(rn[1] if rn else None)
    if (ro and rn) and ro[0] != rn[0]:
        yield _finding("proto-validate-tightened", of.full_name, ro[0], rn[0],
                       f"{of.name}: validation moved from {ro[0]} to {rn[0]}", where=where,
                       keyword="validate", context=("validate", of.containing_type.full_name,
                                                    of.full_name))
        return
    for key, old_b, new_b, stricter in _bound_changes(fo, fn):
        rule = "proto-validate-tightened" if stricter else "proto-validate-relaxed"
        yield _finding(rule, of.full_name, old_b, new_b,
                       f"{of.name}: ({_option_name(ro or rn)}.rules).{key} "
                       f"{old_b!r} -> {new_b!r}", where=where, keyword=key,
                       context=("validate", of.containing_type.full_name, of.full_name))
    bound_keys = {k for k in set(fo) | set(fn) if k.rsplit(".", 1)[-1] in _BOUNDS}
    for key in sorted((set(fo) | set(fn)) - bound_keys):
        change = _rule_change(key, fo.get(key), fn.get(key))
        if change is None:
            continue
        rule = "proto-validate-tightened" if change else "proto-validate-relaxed"
        yield _finding(rule, of.full_name, fo.get(key), fn.get(key),
                       f"{of.name}: ({_option_name(ro or rn)}.rules).{key} "
                       f"{fo.get(key)!r} -> {fn.get(key)!r}",
                       where=where, keyword=key,
                       context=("validate", of.containing_type.full_name, of.full_name))


def _option_name(found: tuple[str, Message] | None) -> str:
    return "buf.validate.field" if found and found[0] == "protovalidate" else "validate"


def _enum_findings(pair: _Pair, oe: EnumDescriptor, ne: EnumDescriptor) -> Iterator[Finding]:
    new_by_number = {v.number: v for v in ne.values}
    new_by_name = {v.name: v for v in ne.values}
    old_numbers = {v.number for v in oe.values}
    for ov in oe.values:
        path = f"{oe.full_name}.{ov.name}"
        nv = new_by_number.get(ov.number)
        ctx = ("enum", oe.full_name, ov.name, ov.number)
        if nv is None:
            moved = new_by_name.get(ov.name)
            if moved is not None:
                yield _finding("proto-enum-value-renumbered", path, ov.number, moved.number,
                               f"{ov.name} moved from {ov.number} to {moved.number}",
                               where=pair.where(oe.full_name), keyword="number", context=ctx)
            else:
                yield _finding("proto-enum-value-removed", path, ov.name, None,
                               f"{ov.name} = {ov.number} is gone from NEW",
                               where=pair.where(oe.full_name, side="old"), context=ctx)
        elif nv.name != ov.name and ov.name not in new_by_name:
            # an alias keeps the old name readable: only a vanished name breaks JSON
            yield _finding("proto-enum-value-renamed", path, ov.name, nv.name,
                           f"value {ov.number} renamed {ov.name} -> {nv.name}",
                           where=pair.where(oe.full_name), keyword="name", context=ctx)
    for nv in ne.values:
        if nv.number not in old_numbers and nv.name not in {v.name for v in oe.values}:
            yield _finding("proto-enum-value-added", f"{ne.full_name}.{nv.name}", None,
                           nv.name, f"{nv.name} = {nv.number} is new",
                           where=pair.where(ne.full_name))


# -- exceptions ----------------------------------------------------------------------------


def envoy_exception(pair: _Pair, f: Finding) -> str:
    """The Envoy policy exception covering ``f`` (its reason) or ``""``."""
    for idx in (pair.oi, pair.ni):
        name = f.path
        # the element and its enclosing messages
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            desc = idx.messages.get(prefix)
            if desc is not None:
                if _ALPHA.search(_package(desc)):
                    return f"Envoy exception: alpha package {_package(desc)}"
                if idx.file_of.get(prefix) in idx.wip_files:
                    return (f"Envoy exception: {idx.file_of[prefix]} is work in progress "
                            "(file_status)")
                if is_work_in_progress(desc.GetOptions()):
                    return f"Envoy exception: {prefix} is work in progress (message_status)"
                fname = parts[i] if i < len(parts) else None
                if fname and fname in desc.fields_by_name and \
                        is_work_in_progress(desc.fields_by_name[fname].GetOptions()):
                    return f"Envoy exception: {name} is work in progress (field_status)"
                break
        if name in idx.packages and _ALPHA.search(name):
            return f"Envoy exception: alpha package {name}"
        if f.rule == "proto-package-removed" and name in idx.packages:
            files = {fp.name for fp in idx.schema.root_files() if fp.package == name}
            if files and files <= idx.wip_files:
                return f"Envoy exception: every file of {name} is work in progress"
        for e in (idx.enums.get(name), idx.enums.get(name.rsplit(".", 1)[0])):
            if e is not None:
                if _ALPHA.search(_package(e)):
                    return f"Envoy exception: alpha package {_package(e)}"
                if idx.file_of.get(e.full_name) in idx.wip_files:
                    return f"Envoy exception: {idx.file_of[e.full_name]} is work in progress"
        svc = idx.services.get(name) or idx.services.get(name.rsplit(".", 1)[0])
        if svc is not None and _ALPHA.search(_package(svc)):
            return f"Envoy exception: alpha package {_package(svc)}"
    return ""


# -- witnesses -----------------------------------------------------------------------------


def _witness(pair: _Pair, f: Finding, budget: int, seed: int) -> Break | None:
    from compatfuzz.protobuf._strategies import from_message

    ctx = f.context
    if not ctx:
        return None
    if ctx[0] == "any":
        return any_break(pair.old, pair.new, ctx[1]) if ctx[1] else None
    if ctx[0] == "enum":
        return _enum_witness(pair, ctx[1], ctx[2], budget, seed)
    msg_name, field_name = ctx[1], ctx[2]
    force = {field_name}
    if ctx[0] == "oneof":
        if not ctx[3]:
            return None  # no existing sibling: no data-level witness (generated code only)
        old_desc = pair.old.message(msg_name)
        new_names = {pair.new.message(msg_name).fields_by_name[s.rsplit(".", 1)[1]].number
                     for s in ctx[3] if s.rsplit(".", 1)[1] in
                     pair.new.message(msg_name).fields_by_name}
        force |= {fd.full_name for fd in old_desc.fields if fd.number in new_names}
    about = caused_by(pair.old, pair.new, msg_name, force, on_field=ctx[0] == "validate")
    try:
        strategy = from_message(msg_name, schema=pair.old, minimal=True, force=force,
                                max_depth=3, validate=False)
        found = search(pair.old, pair.new, msg_name, strategy, budget=budget, seed=seed,
                       about=about)
        if found is None and ctx[0] == "validate":
            near = _near_bound(pair, msg_name, field_name, f.new, strategy)
            if near is not None:
                found = search(pair.old, pair.new, msg_name, near, budget=budget, seed=seed,
                               about=about)
    except Exception:  # a message we cannot generate: stays unconfirmed
        found = None
    if found is not None and ctx[0] == "validate":
        return naming_rule(pair.new, msg_name, found, field_name, f.keyword)
    if found is not None or ctx[0] != "field":
        return found
    # the other way: a value NEW writes that OLD rejects (a json_name change: NEW still
    # reads the old spelling, but OLD clients cannot read what NEW writes)
    try:
        new_field = _counterpart(pair, msg_name, field_name)
        if new_field is None:
            return None
        strategy = from_message(msg_name, schema=pair.new, minimal=True, force={new_field},
                                max_depth=3, validate=False)
        back = search(pair.new, pair.old, msg_name, strategy, budget=budget, seed=seed,
                      about=caused_by(pair.new, pair.old, msg_name, {new_field}))
    except Exception:
        return None
    return None if back is None else Break(back.encoding, back.value,
                                           back.reason.replace("NEW", "OLD") + " (written by NEW)",
                                           back.message, Side.RESPONSE)


def _near_bound(pair: _Pair, msg_name: str, field_name: str, bound: Any,
                base: st.SearchStrategy[Message]) -> st.SearchStrategy[Message] | None:
    """Messages whose field sits just past NEW's bound (a string of ``max_len + 1``
    characters, ``max_items + 1`` items, ``lte + 1``): sizes the generator rarely reaches
    on its own. The search still checks that OLD accepts and NEW rejects them."""
    try:
        number = int(str(bound).split()[-1])
    except (TypeError, ValueError):
        return None
    from compatfuzz.protobuf._strategies import from_message

    fd = pair.old.message(msg_name).fields_by_name[field_name.rsplit(".", 1)[1]]
    values: list[Any] = []
    if fd.is_repeated and fd.message_type is not None and not _is_map(fd):
        # max_items/min_items on repeated messages: n items OLD accepts, however NEW
        # judges their own fields (the witness must break the count, see caused_by)
        item = from_message(fd.message_type.full_name, schema=pair.old, minimal=True,
                            max_depth=2)
        sizes = [n for n in (number - 1, number + 1) if 0 <= n <= 1000]
        if not sizes:
            return None
        items = st.sampled_from(sizes).flatmap(
            lambda n: st.lists(item, min_size=n, max_size=n))
        return st.tuples(base, items).map(lambda pair_: _with_items(pair_, fd.name))
    if fd.is_repeated and fd.message_type is None and not _is_map(fd):
        one: Any = "" if fd.type == FieldDescriptor.TYPE_STRING else 0
        for n in (number - 1, number + 1):
            if n >= 0:
                values.append([f"v{i}" if isinstance(one, str) else i for i in range(n)])
    elif fd.type == FieldDescriptor.TYPE_STRING and not fd.is_repeated:
        values = ["a" * n for n in (number - 1, number + 1) if n >= 0]
    elif fd.message_type is None and fd.enum_type is None and not fd.is_repeated and \
            fd.type not in (FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_BYTES):
        values = [number - 1, number, number + 1]
    if not values:
        return None

    def place(pair_: tuple[Message, Any]) -> Message:
        msg, value = pair_
        out = type(msg)()
        out.CopyFrom(msg)
        try:
            if fd.is_repeated:
                getattr(out, fd.name)[:] = value
            else:
                setattr(out, fd.name, value)
        except (TypeError, ValueError):  # out of the field's range
            return msg
        return out

    return st.tuples(base, st.sampled_from(values)).map(place)


def _with_items(pair_: tuple[Message, list[Message]], name: str) -> Message:
    msg, items = pair_
    out = type(msg)()
    out.CopyFrom(msg)
    field = getattr(out, name)
    del field[:]
    field.extend(items)
    return out


def _counterpart(pair: _Pair, msg_name: str, old_field: str) -> str | None:
    """The NEW field with the same number as OLD's ``old_field``."""
    try:
        number = pair.old.message(msg_name).fields_by_name[old_field.rsplit(".", 1)[1]].number
        new_desc = pair.new.message(msg_name)
    except (KeyError, InvalidArgument):
        return None
    match = new_desc.fields_by_number.get(number)
    return None if match is None else str(match.full_name)


def _enum_witness(pair: _Pair, enum_name: str, value_name: str, budget: int, seed: int
                  ) -> Break | None:
    """Find a message field of this enum type and set it to the value."""
    from compatfuzz.protobuf._strategies import from_message

    for msg_name, desc in sorted(pair.oi.messages.items()):
        for fd in desc.fields:
            if fd.enum_type is not None and fd.enum_type.full_name == enum_name:
                number = fd.enum_type.values_by_name[value_name].number
                try:
                    strategy = from_message(msg_name, schema=pair.old, minimal=True,
                                            force={fd.full_name}, max_depth=3,
                                            validate=False, unknown_enums=False)
                    strategy = strategy.filter(functools.partial(_has_enum, fd=fd,
                                                                 number=number))
                    found = search(pair.old, pair.new, msg_name, strategy, budget=budget,
                                   seed=seed, about=caused_by(pair.old, pair.new, msg_name,
                                                              {fd.full_name}))
                except Exception:
                    found = None
                if found is not None:
                    return found
    return None


def _has_enum(msg: Message, *, fd: FieldDescriptor, number: int) -> bool:
    value = getattr(msg, fd.name)
    return number in list(value) if fd.is_repeated else value == number


# -- the engine ----------------------------------------------------------------------------


def _finalize(f: Finding, policy: Policy, reason: str) -> Finding:
    breaking = bool(f.breaks)
    rule = PROTO_RULES[f.rule]
    if f.rule in policy.severities:
        sev = policy.severities[f.rule]
    elif breaking:
        sev = rule.severity
    else:
        sev = Severity.INFO
    f = f.evolve(breaking=breaking, severity=sev)
    entry = policy.ignored(f)
    if entry is not None:
        return f.evolve(ignore_reason=entry.reason)
    if reason and breaking:
        return f.evolve(ignore_reason=reason)
    return f


def _as_schema(value: Any, include: Any) -> ProtoSchema:
    if isinstance(value, ProtoSchema):
        return value
    return load_protos(value, include=include)


def check_protos(old: ProtoSchema | str, new: ProtoSchema | str, *,
                 policy: Policy | None = None, budget: int = 100, dynamic: bool = True,
                 seed: int = 0, envoy_exceptions: bool = True,
                 include: Any = ()) -> Iterator[Any]:
    """Compare two revisions; yields compat's events (``Started`` ... ``Finished``).

    ``old``/``new`` are :class:`ProtoSchema` objects or anything :func:`load_protos`
    reads. ``budget`` bounds the examples searched per finding for a witness;
    ``envoy_exceptions=False`` reports alpha packages and work-in-progress elements as
    breaking too.

    Raises:
        SchemaLoadError: a revision cannot be loaded.

    .. versionadded:: 0.2
    """
    if budget < 0:
        raise InvalidArgument(f"Expected budget >= 0 but got budget={budget!r}")
    o, n = _as_schema(old, include), _as_schema(new, include)
    policy = policy or Policy()
    yield Started(o.label, n.label, Direction.BOTH)
    yield PairStarted("")
    pair = _Pair(o, n, _index(o), _index(n))
    findings: list[Finding] = []
    notes = 0
    for raw in static_findings(pair):
        reason = envoy_exception(pair, raw) if envoy_exceptions else ""
        f = _finalize(raw, policy, reason)
        if f.breaking and dynamic and budget and f.severity is not Severity.OFF:
            b = _witness(pair, f, budget, seed)
            if b is not None:
                f = f.evolve(status=Status.CONFIRMED, witness=Witness(
                    b.side, b.message or f.path,
                    b.value, f"[{b.encoding}] {b.reason}"))
            elif not PROTO_RULES[f.rule].behavioural:
                f = f.evolve(status=Status.UNCONFIRMED)
        f = f.evolve(context=None)
        findings.append(f)
        yield FindingEvent(f)
    if not dynamic and notes == 0:
        yield Note("", "witness search off (--no-dynamic): findings are not proven")
    yield Finished(tuple(findings))


@dataclass(frozen=True)
class ProtoReport:
    """Every finding of one :func:`check_protos` run; ``exit_code`` as the CLI's."""

    old: str
    new: str
    findings: tuple[Finding, ...]

    @property
    def breaking(self) -> tuple[Finding, ...]:
        return Finished(self.findings).breaking

    @property
    def exit_code(self) -> int:
        return 1 if self.breaking else 0

    def by_rule(self, rule: str) -> list[Finding]:
        return [f for f in self.findings if f.rule == rule]


def diff_protos(old: ProtoSchema | str, new: ProtoSchema | str, **options: Any) -> ProtoReport:
    """Run :func:`check_protos` to the end and return a :class:`ProtoReport`.

    Example::

        report = diff_protos(load_protos("old/api"), load_protos("new/api"))
        assert report.exit_code == 0, [f.to_json() for f in report.breaking]
    """
    started: Started | None = None
    for event in check_protos(old, new, **options):
        if isinstance(event, Started):
            started = event
        elif isinstance(event, Finished):
            assert started is not None
            return ProtoReport(started.old, started.new, event.findings)
    raise AssertionError("check_protos() ended without Finished")  # pragma: no cover
