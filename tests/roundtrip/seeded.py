"""The Sprocket API (data/seeded.yaml): a correct hub-and-spoke converter and seeded bugs.

The seeded-bug suite measures how soon compatfuzz finds a real conversion bug
(``test_seeded_suite.py`` with the default budget, ``benchmarks/bench_seeded.py`` as a
distribution over seeds), so each entry of :data:`BUGS` is the correct converter with
*one* classic bug of a real category, and each says which field it corrupts, in which
round-trip unit it shows, and a witness object on which it provably loses information.

The correct :class:`Converter` behaves like a Go conversion webhook: quantities are
re-marshalled (``1024Mi`` -> ``1Gi``), and what an older version cannot hold (v1's
``priorityClassName``, a ``bufferBytes`` beyond int32, a timeout that is not whole
seconds, ``args`` beyond v1alpha1's 8) is kept in the ``conversion-data`` annotation and
restored, as Cluster API's converters do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import struct
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from pathlib import Path
from typing import Any

from compatfuzz.roundtrip import API
from compatfuzz.semantic import parse_go_duration, parse_quantity, quantity_from_json

CRD = Path(__file__).parent / "data" / "seeded.yaml"
NAME = "sprockets"
GROUP = "example.com"
STASH = "sprocket.example.com/conversion-data"
INT32_MAX = 2**31 - 1
V1ALPHA1_MAX_ARGS = 8


@contextlib.contextmanager
def without_local_constants() -> Iterator[bool]:
    """Generate as an installed compatfuzz does: without Hypothesis's *local constants*.

    Hypothesis draws about 2.5% of its choices from literals it harvests from every loaded
    module outside site-packages and ``tests/``. In this repository that includes
    compatfuzz's own source (an editable install) and the running script, so the pool
    changes with any edit to any of them and with the modules a session happens to have
    loaded, and each change reshuffles every seeded run; an installed compatfuzz never
    contributes to it. Measuring the generator means measuring it without that pool.
    Yields False (and changes nothing) if Hypothesis's internals have moved.
    """
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        original = providers._get_local_constants
        cache = providers.CONSTANTS_CACHE.cache
        empty = Constants()
    except (ImportError, AttributeError):  # pragma: no cover - another Hypothesis
        yield False
        return
    setattr(providers, "_get_local_constants", lambda: empty)  # noqa: B010
    cache.clear()  # permitted constants are cached per choice type: drop the old pool's
    try:
        yield True
    finally:
        setattr(providers, "_get_local_constants", original)  # noqa: B010
        cache.clear()


def first_failure(api: API, unit: Any, seed: int,
                  max_examples: int = 100) -> tuple[int, Any, BaseException] | None:
    """(property calls up to and including the first failing one, its object, its error),
    or None when none of ``max_examples`` fails.

    The unit runs with the seed ``compatfuzz fuzz --seed SEED`` gives it and the
    ``default`` profile's other settings, generation only: whether a run catches a bug is
    decided before it shrinks.
    """
    from hypothesis import Phase, Verbosity, settings
    from hypothesis import seed as hseed

    from compatfuzz.roundtrip import build_test, get_profile
    from compatfuzz.roundtrip._engine._given import Recorder
    from compatfuzz.roundtrip._engine._runner import unit_seed

    class First(Recorder):
        first: tuple[int, Any, BaseException] | None = None

        def failed(self, obj: Any, exc: BaseException, output: str = "") -> None:
            if self.first is None:
                self.first = (self.calls, obj, exc)
            super().failed(obj, exc, output)

    recorder = First()
    test_settings = settings(get_profile("default"), max_examples=max_examples,
                             database=None, phases=[Phase.generate], derandomize=False,
                             verbosity=Verbosity.quiet, print_blob=False)
    test = hseed(unit_seed(seed, unit))(build_test(api, unit, settings=test_settings,
                                                   recorder=recorder))
    with contextlib.suppress(Exception):  # the failure itself; First recorded it
        test()
    return recorder.first


# -- values as Go sees them ---------------------------------------------------------


def go_quantity(value: Any) -> Any:
    """What ``resource.Quantity`` marshals after unmarshalling ``value`` (or ``value``)."""
    try:
        return str(quantity_from_json(value))
    except ValueError:
        return value


def quantity_value(value: Any) -> Decimal | None:
    """The exact value of a quantity, or None."""
    try:
        num, den = quantity_from_json(value).as_fraction()
    except ValueError:
        return None
    return Decimal(num) / Decimal(den) if den != 1 else Decimal(num)


def decimal_quantity(amount: Decimal) -> str:
    """A plain decimal quantity string for ``amount`` (``1.5``, ``120``), canonicalised."""
    text = format(amount.normalize(), "f")
    return str(parse_quantity(text))


_TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
                   r"(?:([Zz])|([+-])(\d\d):(\d\d))$")


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, year 0 included)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


@dataclass(frozen=True)
class Instant:
    """An RFC 3339 date-time taken apart: UTC seconds since the epoch, nanoseconds, the
    offset it was written in (minutes) and its fractional digits."""

    seconds: int
    nanos: int
    offset: int
    digits: int

    @classmethod
    def parse(cls, text: Any) -> Instant | None:
        m = _TIME.match(text) if isinstance(text, str) else None
        if m is None:
            return None
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        frac = m.group(7) or ""
        offset = 0 if m.group(8) else (int(m.group(10)) * 60 + int(m.group(11))) * (
            -1 if m.group(9) == "-" else 1)
        local = _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s
        return cls(local - offset * 60, int(frac.ljust(9, "0")) if frac else 0, offset,
                   len(frac))

    def format(self, offset: int | None = None, digits: int | None = None) -> str:
        offset = self.offset if offset is None else offset
        digits = self.digits if digits is None else digits
        days, rest = divmod(self.seconds + offset * 60, 86400)
        y, mo, d = _civil_from_days(days)
        text = f"{y:04d}-{mo:02d}-{d:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
        if digits:
            text += "." + f"{self.nanos:09d}"[:digits]
        if offset == 0:
            return text + "Z"
        sign = "+" if offset > 0 else "-"
        return f"{text}{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"


def whole_seconds(text: str) -> int | None:
    """A Go duration as v1alpha1's ``timeoutSeconds`` holds it (truncated, clamped)."""
    try:
        ns = parse_go_duration(text)
    except ValueError:
        return None
    seconds = abs(ns) // 10**9 * (1 if ns >= 0 else -1)
    return min(max(seconds, 0), INT32_MAX)


# -- the correct converter ----------------------------------------------------------


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def _tidy(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("annotations") == {}:
        del meta["annotations"]
    if meta == {}:
        del obj["metadata"]
    return obj


class Converter:
    """The correct converter (hub v1). Each seeded bug overrides one step of it."""

    # Fields of every version that Go re-marshals as quantities.
    def go_round_trip(self, spec: dict[str, Any]) -> None:
        for key in ("memory", "cpu"):
            if key in spec:
                spec[key] = go_quantity(spec[key])
        resources = spec.get("resources")
        if isinstance(resources, dict):
            for key in ("limits", "requests"):
                if isinstance(resources.get(key), dict):
                    resources[key] = {k: go_quantity(v) for k, v in resources[key].items()}

    # Steps a bug may replace.
    def narrow_int32(self, value: int) -> int:
        """v1's int64 ``bufferBytes`` in an int32 field: clamped (the exact value is stashed)."""
        return min(value, INT32_MAX)

    def rename_down(self, spec: dict[str, Any]) -> None:
        if "replicas" in spec:
            spec["size"] = spec.pop("replicas")

    def rename_up(self, spec: dict[str, Any]) -> None:
        if "size" in spec:
            spec["replicas"] = spec.pop("size")

    def timeout_seconds(self, text: str) -> int | None:
        return whole_seconds(text)

    def suspend_down(self, value: bool) -> str:
        return json.dumps(value)

    def split_args(self, args: list[Any]) -> tuple[list[Any], list[Any]]:
        return args[:V1ALPHA1_MAX_ARGS], args[V1ALPHA1_MAX_ARGS:]

    def unstash(self, annotations: dict[str, Any]) -> dict[str, Any]:
        """Take the conversion-data annotation out of ``annotations`` (empty if none)."""
        raw = annotations.pop(STASH, None)
        try:
            stash = json.loads(raw) if isinstance(raw, str) else {}
        except ValueError:
            return {}
        return stash if isinstance(stash, dict) else {}

    # Hub -> older version, and back.
    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        """v1 spec -> ``version``'s spec, in place; what it cannot hold goes to ``stash``."""
        self.go_round_trip(spec)
        if "priorityClassName" in spec:
            stash["priorityClassName"] = spec.pop("priorityClassName")
        value = spec.get("bufferBytes")
        if isinstance(value, int) and value > INT32_MAX:
            stash["bufferBytes"] = value
            spec["bufferBytes"] = self.narrow_int32(value)
        if version != "v1alpha1":
            return
        self.rename_down(spec)
        if "timeout" in spec:
            text = spec.pop("timeout")
            seconds = self.timeout_seconds(text) if isinstance(text, str) else None
            if seconds is not None:
                spec["timeoutSeconds"] = seconds
            if text != f"{seconds}s":
                stash["timeout"] = text
        if isinstance(spec.get("suspend"), bool):
            spec["suspend"] = self.suspend_down(spec["suspend"])
        if isinstance(spec.get("args"), list):
            spec["args"], tail = self.split_args(spec["args"])
            if tail:
                stash["args"] = tail

    def up(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        """``version``'s spec -> v1 spec, in place, restoring what ``stash`` kept."""
        self.go_round_trip(spec)
        if "priorityClassName" in stash:
            spec["priorityClassName"] = stash["priorityClassName"]
        exact = stash.get("bufferBytes")
        if isinstance(exact, int) and spec.get("bufferBytes") == min(exact, INT32_MAX):
            spec["bufferBytes"] = exact
        if version != "v1alpha1":
            return
        self.rename_up(spec)
        stashed = stash.get("timeout")
        if "timeoutSeconds" in spec:
            seconds = spec.pop("timeoutSeconds")
            unchanged = isinstance(stashed, str) and whole_seconds(stashed) == seconds
            spec["timeout"] = stashed if unchanged else f"{seconds}s"
        elif isinstance(stashed, str):
            spec["timeout"] = stashed
        if spec.get("suspend") in ("true", "false"):
            spec["suspend"] = spec["suspend"] == "true"
        if isinstance(stash.get("args"), list):
            spec["args"] = [*spec.get("args", []), *stash["args"]]

    def to_hub(self, obj: dict[str, Any]) -> dict[str, Any]:
        version = obj["apiVersion"].rsplit("/", 1)[-1]
        out: dict[str, Any] = _copy(obj)
        out["apiVersion"] = f"{GROUP}/v1"
        meta = out.setdefault("metadata", {})
        annotations = meta.get("annotations")
        stash = self.unstash(annotations) if isinstance(annotations, dict) else {}
        if stash:
            out.setdefault("spec", {})
        if isinstance(out.get("spec"), dict):
            self.up(out["spec"], version, stash)
        return _tidy(out)

    def from_hub(self, hub: dict[str, Any], version: str) -> dict[str, Any]:
        out: dict[str, Any] = _copy(hub)
        out["apiVersion"] = f"{GROUP}/{version}"
        stash: dict[str, Any] = {}
        if isinstance(out.get("spec"), dict):
            self.down(out["spec"], version, stash)
        if stash:
            meta = out.setdefault("metadata", {})
            meta.setdefault("annotations", {})[STASH] = json.dumps(
                stash, sort_keys=True, separators=(",", ":"))
        return out

    def api(self, **options: Any) -> API:
        return API.from_crd(NAME, CRD, to_hub=self.to_hub, from_hub=self.from_hub, **options)


# -- the seeded bugs ----------------------------------------------------------------
# Each one is the correct converter with one bug. ``down`` overrides run after the
# correct step, so they see (and corrupt) the older version's spec.


class Int64ThroughFloat(Converter):
    """A JSON decoder into ``interface{}`` / a JavaScript client: int64 becomes float64."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("revision"), int):
            spec["revision"] = int(float(spec["revision"]))


class Int32Wrap(Converter):
    """``int32(in.BufferBytes)``: the int64 wraps instead of being clamped."""

    def narrow_int32(self, value: int) -> int:
        return (value + 2**31) % 2**32 - 2**31


class ZeroAsUnset(Converter):
    """``if in.Replicas != 0 { out.Size = &in.Replicas }``: 0 replicas becomes unset."""

    def rename_down(self, spec: dict[str, Any]) -> None:
        replicas = spec.pop("replicas", None)
        if replicas:
            spec["size"] = replicas


class NegativeAbs(Converter):
    """The offset goes through an unsigned duration: its sign is lost."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("offsetSeconds"), int):
            spec["offsetSeconds"] = abs(spec["offsetSeconds"])


class NumberThroughFloat32(Converter):
    """``float32(in.ScaleFactor)``: a float64 squeezed into a float32 field."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        value = spec.get("scaleFactor")
        if isinstance(value, int | float) and not isinstance(value, bool):
            narrowed = struct.unpack("f", struct.pack("f", value))[0]
            spec["scaleFactor"] = int(narrowed) if narrowed.is_integer() else narrowed


class QuantityThroughFloat(Converter):
    """``resource.NewQuantity(int64(q.AsApproximateFloat64()))``-style: via float64."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        amount = quantity_value(spec.get("memory"))
        if amount is not None:
            spec["memory"] = decimal_quantity(Decimal(repr(float(amount))))


class QuantityMilliRounding(Converter):
    """``q.MilliValue()`` then ``NewMilliQuantity``: rounds up to whole millis."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        amount = quantity_value(spec.get("cpu"))
        if amount is not None:
            millis = (amount * 1000).to_integral_value(rounding=ROUND_CEILING)
            spec["cpu"] = str(parse_quantity(f"{int(millis)}m"))


class ZeroQuantityDropped(Converter):
    """``if !q.IsZero() { out[name] = q }``: a zero limit is not copied."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        limits = (spec.get("resources") or {}).get("limits")
        if isinstance(limits, dict):
            for key in [k for k, v in limits.items() if quantity_value(v) == 0]:
                del limits[key]


def _rolling(spec: dict[str, Any]) -> dict[str, Any]:
    strategy = spec.get("strategy")
    rolling = strategy.get("rollingUpdate") if isinstance(strategy, dict) else None
    return rolling if isinstance(rolling, dict) else {}


class IntOrStringParsed(Converter):
    """``intstr.Parse(in.MaxSurge.String())``: a digit-only string becomes an int."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        rolling = _rolling(spec)
        value = rolling.get("maxSurge")
        if isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value):
            rolling["maxSurge"] = int(value)


class PercentAsInt(Converter):
    """``strconv.Atoi(strings.TrimSuffix(s, "%"))``: "25%" comes back as 25."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        rolling = _rolling(spec)
        value = rolling.get("maxUnavailable")
        if isinstance(value, str) and re.fullmatch(r"[0-9]+%", value):
            rolling["maxUnavailable"] = int(value[:-1])


def _retime(spec: dict[str, Any], key: str, change: Any) -> None:
    instant = Instant.parse(spec.get(key))
    if instant is not None:
        new = change(instant)
        if new is None:
            del spec[key]
        else:
            spec[key] = new


class NanosecondsTruncated(Converter):
    """Through Python's ``datetime`` (or a JavaScript ``Date``): microseconds at best."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        _retime(spec, "startTime", lambda t: Instant(
            t.seconds, t.nanos // 1000 * 1000, t.offset, min(t.digits, 6)).format())


class OffsetDropped(Converter):
    """The local wall-clock time is kept and labelled UTC: the offset is dropped."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        _retime(spec, "expiresAt", lambda t: Instant(
            t.seconds + t.offset * 60, t.nanos, 0, t.digits).format())


class ZeroTimeAsUnset(Converter):
    """``metav1.Time`` marshals its zero value (0001-01-01T00:00:00Z) as null."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        zero = _days_from_civil(1, 1, 1) * 86400
        _retime(spec, "notBefore", lambda t: None if (t.seconds, t.nanos) == (zero, 0)
                else t.format())


class TimeThroughUnixNanos(Converter):
    """``time.Unix(0, t.UnixNano())``: int64 nanoseconds overflow after 2262 (and
    before 1677), e.g. on the 9999-12-31 that means "never expires"."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)

        def through_nanos(t: Instant) -> str:
            ns = (t.seconds * 10**9 + t.nanos + 2**63) % 2**64 - 2**63
            return Instant(ns // 10**9, ns % 10**9, 0, 9 if ns % 10**9 else 0).format()

        _retime(spec, "expiresAt", through_nanos)


class DurationThroughMinutes(Converter):
    """The timeout is converted as whole minutes: ``1m30s`` -> 60 seconds."""

    def timeout_seconds(self, text: str) -> int | None:
        seconds = whole_seconds(text)
        return None if seconds is None else seconds // 60 * 60


class FalseAsUnset(Converter):
    """``if in.Paused { out.Paused = true }``: an explicit false becomes unset."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if spec.get("paused") is False:
            del spec["paused"]


class BoolAsPythonString(Converter):
    """``str(True)`` is "True", which the other side does not read as "true"."""

    def suspend_down(self, value: bool) -> str:
        return str(value)


class EmptyStringAsUnset(Converter):
    """``if in.ServiceAccountName != ""``: an explicit empty string becomes unset."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if spec.get("serviceAccountName") == "":
            del spec["serviceAccountName"]


class WhitespaceStripped(Converter):
    """``strings.TrimSpace`` on a display name."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("displayName"), str):
            spec["displayName"] = spec["displayName"].strip()


class UnicodeNormalised(Converter):
    """``norm.NFC.String``: decomposed text (e + U+0301) comes back composed."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("description"), str):
            spec["description"] = unicodedata.normalize("NFC", spec["description"])


class EnumCaseFolded(Converter):
    """``strings.Title(strings.ToLower(p))``: "OnFailure" comes back "Onfailure"."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("restartPolicy"), str):
            spec["restartPolicy"] = spec["restartPolicy"].capitalize()


class ListMapKeyCollision(Converter):
    """Ports collected in a map by ``containerPort`` alone: TCP and UDP on one port merge
    (the list-map key is containerPort *and* protocol)."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("ports"), list):
            merged = {p.get("containerPort"): p for p in spec["ports"]}
            spec["ports"] = list(merged.values())


class ListMapCaseInsensitive(Converter):
    """Env vars collected case-insensitively (Windows-style): PATH and path merge."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("env"), list):
            merged = {str(e.get("name")).upper(): e for e in spec["env"]}
            spec["env"] = list(merged.values())


class SetDedupeCasefold(Converter):
    """A set de-duplicated by a looser key than its own (case-insensitive)."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("tags"), list):
            seen: dict[str, Any] = {}
            for tag in spec["tags"]:
                seen.setdefault(str(tag).casefold(), tag)
            spec["tags"] = list(seen.values())


class ListTruncatedToOldMax(Converter):
    """v1alpha1 holds at most 8 args; the rest is cut off instead of stashed."""

    def split_args(self, args: list[Any]) -> tuple[list[Any], list[Any]]:
        return args[:V1ALPHA1_MAX_ARGS], []


class ListTailDropped(Converter):
    """An off-by-one copy loop: the last command element is lost."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("command"), list) and len(spec["command"]) > 1:
            spec["command"] = spec["command"][:-1]


class AtomicListAsSet(Converter):
    """An atomic (ordered) list treated as a set: sorted and de-duplicated."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("command"), list):
            spec["command"] = sorted(set(spec["command"]))


def _rekey(spec: dict[str, Any], key: str, change: Any) -> None:
    if isinstance(spec.get(key), dict):
        spec[key] = {change(k): v for k, v in spec[key].items()}


class MapKeyStripped(Converter):
    """``strings.TrimSpace`` on map keys."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        _rekey(spec, "parameters", str.strip)


class MapKeyLowercased(Converter):
    """Map keys lower-cased (as if they were HTTP headers)."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        _rekey(spec, "parameters", str.lower)


class MapEmptyValueDropped(Converter):
    """``if v != "" { out[k] = v }``: entries with empty values are not copied."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        if isinstance(spec.get("parameters"), dict):
            spec["parameters"] = {k: v for k, v in spec["parameters"].items() if v != ""}


class EmptyStructDropped(Converter):
    """A ``*RollingUpdate`` pointer set only when the struct is non-zero: ``{}`` is lost."""

    def down(self, spec: dict[str, Any], version: str, stash: dict[str, Any]) -> None:
        super().down(spec, version, stash)
        strategy = spec.get("strategy")
        if isinstance(strategy, dict) and strategy.get("rollingUpdate") == {}:
            del strategy["rollingUpdate"]


class RenamedOneWay(Converter):
    """v1alpha1's ``size`` is renamed on the way down but not on the way up."""

    def rename_up(self, spec: dict[str, Any]) -> None:
        spec.pop("size", None)


class StashLostWithOtherAnnotations(Converter):
    """The stash is read only when it is the object's only annotation."""

    def unstash(self, annotations: dict[str, Any]) -> dict[str, Any]:
        if set(annotations) != {STASH}:
            annotations.pop(STASH, None)
            return {}
        return super().unstash(annotations)


# -- the registry ---------------------------------------------------------------------


@dataclass(frozen=True)
class Bug:
    """One seeded bug: its converter, the field it corrupts (every diff path of a failure
    lies under it, or under one of ``also``, the other fields it corrupts on the way) and
    the round-trip unit it shows in, with a witness ``spec`` of the unit's first version
    that it provably corrupts."""

    name: str
    category: str
    field: str
    unit: tuple[str, str]
    converter: type[Converter]
    witness: dict[str, Any]
    annotations: dict[str, str] = dataclasses.field(default_factory=dict)
    also: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.field, *self.also)

    @property
    def unit_id(self) -> str:
        return f"{NAME}::roundtrip[{self.unit[0]}->{self.unit[1]}]"

    def api(self, **options: Any) -> API:
        return self.converter().api(**options)

    def witness_object(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"apiVersion": f"{GROUP}/{self.unit[0]}", "kind": "Sprocket",
                               "spec": _copy(self.witness)}
        if self.annotations:
            obj["metadata"] = {"name": "w", "annotations": dict(self.annotations)}
        return obj


A, B = ("v1", "v1alpha1"), ("v1", "v1beta1")
_BUGS = [
    Bug("int64_through_float", "int64 precision loss through float64", "spec.revision", B,
        Int64ThroughFloat, {"revision": 2**53 + 1}),
    Bug("int32_wrap", "int64 -> int32 overflow wrap", "spec.bufferBytes", B, Int32Wrap,
        {"bufferBytes": 2**32 + 5}),
    Bug("zero_as_unset", "zero treated as unset (bounded int)", "spec.replicas", A,
        ZeroAsUnset, {"replicas": 0}),
    Bug("negative_abs", "sign lost (negative number abs'd)", "spec.offsetSeconds", B,
        NegativeAbs, {"offsetSeconds": -3600}),
    Bug("number_through_float32", "float64 -> float32 rounding", "spec.scaleFactor", B,
        NumberThroughFloat32, {"scaleFactor": 0.1}),
    Bug("quantity_through_float", "Quantity precision loss through float64", "spec.memory",
        B, QuantityThroughFloat, {"memory": "123456789123456789"}),
    Bug("quantity_milli_rounding", "Quantity rounded to millis", "spec.cpu", A,
        QuantityMilliRounding, {"cpu": "100500u"}),
    Bug("zero_quantity_dropped", "zero quantity treated as unset (map value)",
        "spec.resources.limits", B, ZeroQuantityDropped,
        {"resources": {"limits": {"cpu": "0"}}}),
    Bug("int_or_string_parsed", "digit-only int-or-string string turned into int",
        "spec.strategy.rollingUpdate.maxSurge", A, IntOrStringParsed,
        {"strategy": {"rollingUpdate": {"maxSurge": "3"}}}),
    Bug("percent_as_int", "int-or-string percentage turned into int",
        "spec.strategy.rollingUpdate.maxUnavailable", B, PercentAsInt,
        {"strategy": {"rollingUpdate": {"maxUnavailable": "25%"}}}),
    Bug("nanoseconds_truncated", "date-time truncated to microseconds", "spec.startTime", B,
        NanosecondsTruncated, {"startTime": "2026-01-02T03:04:05.123456789Z"}),
    Bug("offset_dropped", "date-time offset dropped (wall clock labelled UTC)",
        "spec.expiresAt", A, OffsetDropped, {"expiresAt": "2026-01-02T03:04:05+01:00"}),
    Bug("zero_time_as_unset", "zero date-time (0001-01-01) treated as unset",
        "spec.notBefore", B, ZeroTimeAsUnset, {"notBefore": "0001-01-01T00:00:00Z"}),
    Bug("time_through_unix_nanos", "date-time overflow through int64 Unix nanoseconds",
        "spec.expiresAt", B, TimeThroughUnixNanos, {"expiresAt": "9999-12-31T23:59:59Z"}),
    Bug("duration_through_minutes", "duration unit conversion loses seconds",
        "spec.timeout", A, DurationThroughMinutes, {"timeout": "1m30s"}),
    Bug("false_as_unset", "false treated as unset", "spec.paused", B, FalseAsUnset,
        {"paused": False}),
    Bug("bool_as_python_string", "boolean as the string \"True\" vs \"true\"",
        "spec.suspend", A, BoolAsPythonString, {"suspend": True}),
    Bug("empty_string_as_unset", "empty string treated as unset", "spec.serviceAccountName",
        B, EmptyStringAsUnset, {"serviceAccountName": ""}),
    Bug("whitespace_stripped", "whitespace stripped from a string", "spec.displayName", A,
        WhitespaceStripped, {"displayName": " gear "}),
    Bug("unicode_normalised", "Unicode NFC normalisation of a string", "spec.description",
        B, UnicodeNormalised, {"description": "Cafe\u0301"}),
    Bug("enum_case_folded", "enum value case-folded", "spec.restartPolicy", A,
        EnumCaseFolded, {"restartPolicy": "OnFailure"}),
    Bug("list_map_key_collision", "list-map merged by part of its key", "spec.ports", B,
        ListMapKeyCollision, {"ports": [{"containerPort": 53, "protocol": "TCP"},
                                        {"containerPort": 53, "protocol": "UDP"}]}),
    Bug("list_map_case_insensitive", "list-map keys compared case-insensitively",
        "spec.env", A, ListMapCaseInsensitive,
        {"env": [{"name": "path", "value": "a"}, {"name": "PATH", "value": "b"}]}),
    Bug("set_dedupe_casefold", "set de-duplicated with a wrong (case-folded) key",
        "spec.tags", B, SetDedupeCasefold, {"tags": ["gpu", "GPU"]}),
    Bug("list_truncated_to_old_max", "list truncated to the old version's maxItems",
        "spec.args", A, ListTruncatedToOldMax, {"args": [str(i) for i in range(9)]}),
    Bug("list_tail_dropped", "list tail dropped (off by one)", "spec.command", B,
        ListTailDropped, {"command": ["run", "--fast"]}),
    Bug("atomic_list_as_set", "order of an atomic list lost (treated as a set)",
        "spec.command", A, AtomicListAsSet, {"command": ["run", "--fast"]}),
    Bug("map_key_stripped", "map key normalised (whitespace stripped)", "spec.parameters", B,
        MapKeyStripped, {"parameters": {"mode ": "fast"}}),
    Bug("map_key_lowercased", "map key case-folded", "spec.parameters", A, MapKeyLowercased,
        {"parameters": {"Mode": "fast"}}),
    Bug("map_empty_value_dropped", "empty map value treated as unset", "spec.parameters", B,
        MapEmptyValueDropped, {"parameters": {"debug": ""}}),
    Bug("empty_struct_dropped", "nested object dropped when all its fields are unset",
        "spec.strategy.rollingUpdate", B, EmptyStructDropped,
        {"strategy": {"type": "RollingUpdate", "rollingUpdate": {}}}),
    Bug("renamed_one_way", "renamed field copied only one way", "spec.size",
        ("v1alpha1", "v1"), RenamedOneWay, {"size": 3}),
    Bug("stash_lost_with_other_annotations",
        "stash annotation not restored when another annotation exists",
        "spec.priorityClassName", B, StashLostWithOtherAnnotations,
        {"priorityClassName": "high"}, annotations={"example.com/team": "gears"},
        # the whole stash is lost: an int64 bufferBytes kept there goes with it
        also=("spec.bufferBytes",)),
]
#: bug name -> Bug, in the order above (grouped by value class)
BUGS: dict[str, Bug] = {bug.name: bug for bug in _BUGS}
