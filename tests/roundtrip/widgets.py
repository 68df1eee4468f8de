"""A three-version Widget API with a correct, canonicalising converter and seeded bugs.

The correct converter canonicalises the way real ones do (1024Mi -> 1Gi, +01:00 -> Z,
empty list -> absent) and keeps v1's new field ``paused`` in an annotation on older
versions.  Each entry of :data:`BUGS` is the correct converter with one classic bug.
"""

from __future__ import annotations

import datetime
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from compatfuzz.roundtrip import API
from compatfuzz.schema import Schema

GROUP = "widgets.example.com"
PAUSED = f"{GROUP}/paused"
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)


def _spec(new_field: bool) -> dict[str, Any]:
    props: dict[str, Any] = {
        "replicas": {"type": "integer", "minimum": 0, "maximum": 100},
        "items": {"type": "array", "maxItems": 8, "items": {"type": "string",
                                                             "maxLength": 8}},
        "memory": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                   "pattern": QUANTITY_PATTERN, "x-kubernetes-int-or-string": True},
        "port": {"anyOf": [{"type": "integer"}, {"type": "string"}],
                 "x-kubernetes-int-or-string": True},
        "since": {"type": "string", "format": "date-time"},
        "minReplicas": {"type": "integer", "minimum": 0, "maximum": 100},
        "maxReplicas": {"type": "integer", "minimum": 0, "maximum": 100},
    }
    if new_field:
        props["paused"] = {"type": "boolean"}
    return {"type": "object", "properties": props}


def widget_schema(version: str) -> Schema:
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": _spec(new_field=version == "v1"),
        },
        "required": ["spec"],
    }
    return Schema(root, name=f"Widget {version}", kubernetes=True)


VERSIONS = ("v1alpha1", "v1beta1", "v1")

# -- quantity and time helpers ------------------------------------------------------

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": 1,
           "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QTY = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))([eE][+-]?(?:[0-9]+(?:\.[0-9]*)?"
                  r"|\.[0-9]+)|[KMGTPE]i|[numkMGTPE])?$")


def parse_quantity(value: Any) -> Decimal | None:
    """The exact value of a Kubernetes quantity, or None if it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if not isinstance(value, str):
        return None
    m = _QTY.match(value)
    if m is None:
        return None
    number, suffix = m.group(1), m.group(2) or ""
    try:
        if suffix[:1] in ("e", "E"):
            return Decimal(number) * Decimal(10) ** Decimal(suffix[1:])
        return Decimal(number) * Decimal(_SUFFIX[suffix])
    except (InvalidOperation, ValueError):
        return None


def canonical_quantity(value: Any) -> Any:
    """1024Mi -> 1Gi: the largest binary suffix that divides an integral value exactly."""
    amount = parse_quantity(value)
    # Kubernetes keeps quantities beyond int64 as written: canonicalise only below 2**63.
    if (amount is None or not isinstance(value, str) or abs(amount) >= 2**63
            or amount != amount.to_integral_value()):
        return value
    if amount == 0:
        return "0"
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = _SUFFIX[suffix]
        if amount % unit == 0 and abs(amount) >= unit:
            return f"{int(amount / unit)}{suffix}"
    return value


def canonical_time(value: Any) -> Any:
    """+01:00 -> Z: the same instant, written in UTC (left alone if not parseable)."""
    if not isinstance(value, str):
        return value
    m = re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(Z|[+-]\d\d:\d\d)$", value)
    if m is None:
        return value
    try:
        instant = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    try:
        utc = instant.astimezone(datetime.timezone.utc)
    except OverflowError:  # 0001-01-01T00:30:00+01:00 is in year 0: leave it as written
        return value
    # strftime("%Y") does not zero-pad years before 1000 on glibc ("1-01-01T...", a bug
    # the swarm generator's zero time found in this converter)
    text = f"{utc.year:04d}" + utc.strftime("-%m-%dT%H:%M:%S")
    if m.group(1):
        text += m.group(1)
    return text + "Z"


def lossy_quantity(value: Any) -> Any:
    """Rounds to whole MiB: the precision-loss bug."""
    amount = parse_quantity(value)
    if amount is None or abs(amount) >= 2**63:
        return value
    return f"{int(amount / 2**20)}Mi"


# -- converters: hub and spoke through v1 -------------------------------------------


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(obj))


class Converter:
    """The correct converter; each bug below overrides one step."""

    def canonicalise(self, spec: dict[str, Any]) -> None:
        if "memory" in spec:
            spec["memory"] = canonical_quantity(spec["memory"])
        if "since" in spec:
            spec["since"] = canonical_time(spec["since"])
        if spec.get("items") == []:
            del spec["items"]

    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        """v1 spec -> older spec (in place)."""
        if "paused" in spec:
            meta.setdefault("annotations", {})[PAUSED] = json.dumps(spec.pop("paused"))

    def up(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        """older spec -> v1 spec (in place)."""
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and annotations.get(PAUSED) in ("true", "false"):
            spec["paused"] = json.loads(annotations.pop(PAUSED))
            if not annotations:
                del meta["annotations"]

    def to_hub(self, obj: dict[str, Any]) -> dict[str, Any]:
        out = _copy(obj)
        if isinstance(out.get("spec"), dict):
            self.canonicalise(out["spec"])
            self.up(out["spec"], out.setdefault("metadata", {}))
            if out["metadata"] == {} and "metadata" not in obj:
                del out["metadata"]
        out["apiVersion"] = f"{GROUP}/v1"
        return out

    def from_hub(self, hub: dict[str, Any], version: str) -> dict[str, Any]:
        out = _copy(hub)
        if isinstance(out.get("spec"), dict):
            self.canonicalise(out["spec"])
            self.down(out["spec"], out.setdefault("metadata", {}))
            if out["metadata"] == {} and "metadata" not in hub:
                del out["metadata"]
        out["apiVersion"] = f"{GROUP}/{version}"
        return out

    def api(self, **options: Any) -> API:
        schemas = {v: widget_schema(v) for v in VERSIONS}
        return API.from_schemas("widgets", schemas, kind="Widget", group=GROUP, hub="v1",
                                to_hub=self.to_hub, from_hub=self.from_hub, **options)


class DroppedListTail(Converter):
    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        super().down(spec, meta)
        if len(spec.get("items", ())) > 1:
            spec["items"] = spec["items"][:-1]  # off by one: the last item is lost


class QuantityPrecisionLoss(Converter):
    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        super().down(spec, meta)
        if "memory" in spec:
            spec["memory"] = lossy_quantity(spec["memory"])


class IntOrStringTypeChange(Converter):
    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        super().down(spec, meta)
        if isinstance(spec.get("port"), int):
            spec["port"] = str(spec["port"])


class NewFieldLost(Converter):
    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        spec.pop("paused", None)


class TwoFieldInteraction(Converter):
    def down(self, spec: dict[str, Any], meta: dict[str, Any]) -> None:
        super().down(spec, meta)
        # Copy-paste slip in the branch that handles both bounds: only fires when both
        # fields are set (and only shows when they differ).
        if "minReplicas" in spec and "maxReplicas" in spec:
            spec["maxReplicas"] = spec["minReplicas"]


BUGS = {
    "dropped_list_tail": DroppedListTail,
    "quantity_precision_loss": QuantityPrecisionLoss,
    "int_or_string_type_change": IntOrStringTypeChange,
    "new_field_lost": NewFieldLost,
    "two_field_interaction": TwoFieldInteraction,
}
