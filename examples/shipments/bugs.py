"""Seeded bugs: the correct Shipment converter with one mistake each, as webhooks ship them.

Each ``bug_*.toml`` config names one instance below (``to_hub = "bugs:ipv6_first_colon.to_hub"``);
``README.md`` shows what compatfuzz says about each.  Every class overrides one step of
:class:`conversion.Converter`; its docstring says why the mistake is realistic.
"""

from __future__ import annotations

from typing import Any

from conversion import Converter, approx_grams

__all__ = ["BUGS"]


class IPv6FirstColon(Converter):
    """Realistic: "host:port" looks like one colon; split(":", 1) works until an IPv6 peer."""

    def split_destination(self, destination: str) -> dict[str, Any]:
        host, _, port = destination.partition(":")  # BUG: "[::1]:80" -> "[", ":1]:80"
        return {"host": host, "port": int(port)}


class JoinWithoutBrackets(Converter):
    """Realistic: an f-string instead of net.JoinHostPort; the last-colon split still parses it."""

    def join_destination(self, destination: dict[str, Any]) -> str:
        return f"{destination['host']}:{destination['port']}"  # BUG: "::1:80", not "[::1]:80"


class WeightInKilograms(Converter):
    """Realistic: a draft documented weight in kg, and integer division got through review."""

    def weight_from_grams(self, grams: int) -> str:
        return f"{grams // 1000}k"  # BUG: drops the grams below a kilogram


class WeightRoundedUp(Converter):
    """Realistic: Quantity.Value() rounds up; "weights are whole grams" until a 250m one."""

    def grams_from_weight(self, weight: Any, stash: dict[str, Any]) -> int:
        return approx_grams(weight)  # BUG: 1500m -> 2 g, the exact weight is not stashed


class CriticalBecomesHigh(Converter):
    """Realistic: the enum value added in v1 gets the closest old value; its stash is forgotten."""

    def priority_down(self, spec: dict[str, Any], stash: dict[str, Any]) -> None:
        if spec.get("priority") == "Critical":
            spec["priority"] = "High"  # BUG: Critical not stashed; v1 reads back High


class EmptyNotesDropped(Converter):
    """Realistic: Go's `if in.Notes != ""` (or Python truthiness) reads an explicit "" as unset."""

    def stash_spoke_fields(self, spec: dict[str, Any], version: str,
                           stash: dict[str, Any]) -> None:
        notes = spec.pop("notes", None)
        if notes:  # BUG: "" is not stashed
            stash["notes"] = notes


class NotesStashedForV1alpha1Only(Converter):
    """Realistic: the stash predates v1beta1, whose branch was copied without it."""

    def stash_spoke_fields(self, spec: dict[str, Any], version: str,
                           stash: dict[str, Any]) -> None:
        if version == "v1alpha1" and "notes" in spec:
            stash["notes"] = spec.pop("notes")
        spec.pop("notes", None)  # BUG: v1beta1's notes are dropped, not stashed


class PriorityDefaultedInConverter(Converter):
    """Realistic: defaulting in the converter (`or "Normal"`) instead of in the schema."""

    def priority_down(self, spec: dict[str, Any], stash: dict[str, Any]) -> None:
        super().priority_down(spec, stash)
        spec.setdefault("priority", "Normal")  # BUG: defaulting belongs in the schema


ipv6_first_colon = IPv6FirstColon()
join_without_brackets = JoinWithoutBrackets()
weight_in_kilograms = WeightInKilograms()
weight_rounded_up = WeightRoundedUp()
critical_becomes_high = CriticalBecomesHigh()
empty_notes_dropped = EmptyNotesDropped()
notes_stashed_for_v1alpha1_only = NotesStashedForV1alpha1Only()
priority_defaulted_in_converter = PriorityDefaultedInConverter()

#: bug name (its config is ``bug_<name>.toml``) -> the converter with that bug
BUGS: dict[str, Converter] = {
    "ipv6_first_colon": ipv6_first_colon,
    "join_without_brackets": join_without_brackets,
    "weight_in_kilograms": weight_in_kilograms,
    "weight_rounded_up": weight_rounded_up,
    "critical_becomes_high": critical_becomes_high,
    "empty_notes_dropped": empty_notes_dropped,
    "notes_stashed_for_v1alpha1_only": notes_stashed_for_v1alpha1_only,
    "priority_defaulted_in_converter": priority_defaulted_in_converter,
}
