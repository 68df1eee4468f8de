"""Correct Shipment converters, hub and spoke through v1 (the storage version).

What a version has no field for travels in one JSON annotation,
``logistics.example.com/conversion-data``, as Cluster API's converters keep theirs
(``MarshalData``/``UnmarshalData`` in ``sigs.k8s.io/cluster-api/util/conversion``):

* stored as v1, an object written as v1alpha1 or v1beta1 keeps its ``notes`` there;
* read as v1alpha1, a v1 object keeps its ``items``, a ``weight`` that is no whole number
  of grams in range, ``priority: Critical`` (shown as High) and ``signatureRequired``;
  read as v1beta1, the last two.

Each conversion takes the stash it finds out of the annotations and writes a new one, so
the stash never outlives the version it was written for.  A stashed value is restored
only while the field it stands in for still says what the down-conversion wrote (a
client that edits ``weightGrams`` or ``priority`` in v1alpha1 gets its edit, not the
stale stash).  So every round trip through any version gives back what was written.

The steps a seeded bug replaces (``bugs.py``) are methods of :class:`Converter`; the
module-level ``to_hub``/``from_hub``/``convert`` are those of the correct one.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

GROUP = "logistics.example.com"
HUB = "v1"
SPOKES = ("v1alpha1", "v1beta1")
#: Where each conversion keeps what the target version has no field for.
STASH = f"{GROUP}/conversion-data"
#: v1alpha1's ``weightGrams`` is an int64 with ``minimum: 0``.
INT64_MAX = 2**63 - 1

# A Kubernetes quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go, the grammar in
# ParseQuantity's comment): a signed decimal number, then a binary suffix (Ki..Ei), a
# decimal one (n u m "" k M G T P E) or a decimal exponent (e3, E-2).
_QUANTITY = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
                       r"(?:([KMGTPE]i)|([numkMGTPE])|[eE]([+-]?[0-9]+))?$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity_value(weight: Any) -> Fraction | None:
    """The exact value of a quantity (a JSON integer or a quantity string), or None when
    it is no quantity Go parses, or its exponent is beyond +-64 (no int64 gram count)."""
    if isinstance(weight, int) and not isinstance(weight, bool):
        return Fraction(weight)
    m = _QUANTITY.match(weight) if isinstance(weight, str) else None
    if m is None:
        return None
    sign, number, binary, decimal, exponent = m.groups()
    value = Fraction(number if not number.endswith(".") else number[:-1])
    if binary:
        value *= _BINARY[binary]
    else:
        power = _DECIMAL[decimal] if decimal else int(exponent or 0)
        if abs(power) > 64:
            return None
        value *= Fraction(10) ** power
    return -value if sign == "-" else value


def approx_grams(weight: Any) -> int:
    """``weightGrams`` for a weight: rounded up, as ``Quantity.Value()`` rounds ("rounded
    up to the nearest integer away from 0", ``k8s.io/apimachinery/pkg/api/resource/
    quantity.go``), and clamped to v1alpha1's range; 0 for what is no quantity."""
    value = quantity_value(weight)
    if value is None:
        return 0
    return min(max(math.ceil(value), 0), INT64_MAX)


def exact_grams(weight: Any) -> int | None:
    """``weightGrams`` for a weight that is a whole number of grams v1alpha1 can hold."""
    value = quantity_value(weight)
    if value is None or value.denominator != 1 or not 0 <= value <= INT64_MAX:
        return None
    return int(value)


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(obj))


def _version(obj: dict[str, Any]) -> str:
    api_version = obj.get("apiVersion")
    group, _, version = str(api_version).rpartition("/")
    if group != GROUP or version not in (HUB, *SPOKES):
        raise ValueError(f"unknown Shipment apiVersion {api_version!r}")
    return version


class Converter:
    """The correct converter. Each seeded bug in ``bugs.py`` overrides one method."""

    # -- the steps ------------------------------------------------------------------

    def split_destination(self, destination: str) -> dict[str, Any]:
        """v1alpha1's "host:port" -> {host, port}, as Go's ``net.SplitHostPort``
        (``net/ipsock.go``) splits it: on the *last* colon, an IPv6 host's brackets removed."""
        host, _, port = destination.rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return {"host": host, "port": int(port)}

    def join_destination(self, destination: dict[str, Any]) -> str:
        """{host, port} -> "host:port", as net.JoinHostPort writes it (IPv6 in brackets)."""
        host, port = destination["host"], destination["port"]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def weight_from_grams(self, grams: int) -> str:
        """v1alpha1's ``weightGrams`` -> v1's ``weight`` quantity (in grams)."""
        return str(grams)

    def grams_from_weight(self, weight: Any, stash: dict[str, Any]) -> int:
        """v1's ``weight`` -> v1alpha1's ``weightGrams``; the exact weight is stashed when
        it is no whole number of grams in range."""
        grams = exact_grams(weight)
        if grams is None:
            stash["weight"] = weight
            return approx_grams(weight)
        return grams

    def priority_down(self, spec: dict[str, Any], stash: dict[str, Any]) -> None:
        """v1's priority for a version without Critical: High, with Critical stashed."""
        if spec.get("priority") == "Critical":
            spec["priority"] = "High"
            stash["priority"] = "Critical"

    def stash_spoke_fields(self, spec: dict[str, Any], version: str,
                           stash: dict[str, Any]) -> None:
        """What v1 has no field for (``notes``), on the way to the hub."""
        if "notes" in spec:
            stash["notes"] = spec.pop("notes")

    def stash_hub_fields(self, spec: dict[str, Any], version: str,
                         stash: dict[str, Any]) -> None:
        """What ``version`` has no field for, on the way from the hub."""
        if "signatureRequired" in spec:
            stash["signatureRequired"] = spec.pop("signatureRequired")
        if version == "v1alpha1" and "items" in spec:
            stash["items"] = spec.pop("items")

    def take_stash(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Remove the conversion-data annotation from ``obj``; return what it held."""
        meta = obj.get("metadata")
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(annotations, dict) or STASH not in annotations:
            return {}
        raw = annotations.pop(STASH)
        if not annotations:
            del meta["annotations"]  # type: ignore[index]
        try:
            stash = json.loads(raw) if isinstance(raw, str) else None
        except ValueError:
            return {}
        return stash if isinstance(stash, dict) else {}

    def put_stash(self, obj: dict[str, Any], stash: dict[str, Any]) -> None:
        if stash:
            meta = obj.setdefault("metadata", {})
            annotations = meta.get("annotations") or {}
            annotations[STASH] = json.dumps(stash, sort_keys=True, separators=(",", ":"))
            meta["annotations"] = annotations

    # -- hub and spoke --------------------------------------------------------------

    def to_hub(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Convert a v1alpha1 or v1beta1 Shipment to v1."""
        version = _version(obj)
        out = _copy(obj)
        out["apiVersion"] = f"{GROUP}/{HUB}"
        if version == HUB:
            return out
        found = self.take_stash(out)
        spec = out.get("spec")
        stash: dict[str, Any] = {}
        if isinstance(spec, dict):
            if version == "v1alpha1":
                if "destination" in spec:
                    spec["destination"] = self.split_destination(spec["destination"])
                if "weightGrams" in spec:
                    grams = spec.pop("weightGrams")
                    kept = found.get("weight")
                    spec["weight"] = kept if "weight" in found and approx_grams(
                        kept) == grams else self.weight_from_grams(grams)
                if "items" in found:
                    spec["items"] = found["items"]
            if found.get("priority") == "Critical" and spec.get("priority") == "High":
                spec["priority"] = "Critical"
            if "signatureRequired" in found:
                spec["signatureRequired"] = found["signatureRequired"]
            self.stash_spoke_fields(spec, version, stash)
        self.put_stash(out, stash)
        return out

    def from_hub(self, hub: dict[str, Any], version: str) -> dict[str, Any]:
        """Convert a v1 Shipment to ``version`` (``"v1alpha1"``, ``"v1beta1"`` or ``"v1"``)."""
        if version not in (HUB, *SPOKES):
            raise ValueError(f"unknown Shipment version {version!r}")
        out = _copy(hub)
        out["apiVersion"] = f"{GROUP}/{version}"
        if version == HUB:
            return out
        found = self.take_stash(out)
        spec = out.get("spec")
        stash: dict[str, Any] = {}
        if isinstance(spec, dict):
            self.priority_down(spec, stash)
            self.stash_hub_fields(spec, version, stash)
            if version == "v1alpha1":
                if "destination" in spec:
                    spec["destination"] = self.join_destination(spec["destination"])
                if "weight" in spec:
                    spec["weightGrams"] = self.grams_from_weight(spec.pop("weight"), stash)
            if "notes" in found:
                spec["notes"] = found["notes"]
        self.put_stash(out, stash)
        return out

    def convert(self, obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        """The same conversion, ConversionReview style (what a webhook handler calls)."""
        return self.from_hub(self.to_hub(obj), desired_api_version.rpartition("/")[2])


_CORRECT = Converter()
to_hub = _CORRECT.to_hub
from_hub = _CORRECT.from_hub
convert = _CORRECT.convert
