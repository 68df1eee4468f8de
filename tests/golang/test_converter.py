"""The Go converter: conversions through controller-runtime's webhook handler in a
long-lived process, and each way the user's Go code can fail (tests/golang/data/tinymod:
v1 spoke, v2 hub; its ConvertTo misbehaves for some spec.name values)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.errors import ConverterError, InvalidArgument
from compatfuzz.golang import GoConverter, go_converter
from compatfuzz.golang._process import GoCrash, GoPanic
from compatfuzz.roundtrip._check._webhook import WebhookError
from compatfuzz.roundtrip._deadline import Alarm, ExampleDeadline

from .conftest import TINY, need_go

GROUP = "tiny.example.com"


@pytest.fixture(scope="module")
def tiny() -> Iterator[GoConverter]:
    need_go()
    converter = go_converter(TINY, ["./api/v1", "./api/v2"], owner="things")
    yield converter
    converter._process.close()


def thing(name: str, items: list[str] | None = None, version: str = "v1") -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name}
    if items is not None:
        spec["items"] = items
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Thing",
            "metadata": {"name": "t", "namespace": "default"}, "spec": spec}


def convert(c: GoConverter, obj: dict[str, Any], a: str = "v1", b: str = "v2") -> Any:
    return c.convert(obj, a, b, label="Thing", hub="v2", target=lambda v: f"{GROUP}/{v}",
                     check=lambda out, _a, _b: out)


def test_the_scheme_s_kinds_hub_and_mode_are_read_from_the_program(tiny: GoConverter) -> None:
    assert tiny.kinds == [
        {"group": GROUP, "kind": "Gadget", "versions": ["v1", "v2"], "mode": "scheme"},
        {"group": GROUP, "kind": "Thing", "versions": ["v1", "v2"], "hub": "v2",
         "mode": "hub"}]
    assert tiny.hub_of(GROUP, "Thing") == "v2" and tiny.hub_of(GROUP, "Gadget") is None
    tiny.check_chains(["v1", "v2"])
    with pytest.raises(InvalidArgument, match=r"v1, v3.*Thing.tiny.example.com: v1, v2"):
        tiny.check_chains(["v1", "v3"])


@settings(max_examples=30, deadline=None)
@given(name=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=10)
       .filter(lambda s: s not in {"panic", "index", "error", "exit", "loop", "print", "drop"}),
       items=st.none() | st.lists(st.text(max_size=5), max_size=3))
def test_a_sound_conversion_round_trips_any_spec(tiny: GoConverter, name: str,
                                                 items: list[str] | None) -> None:
    hub = convert(tiny, thing(name, items))
    assert hub["apiVersion"] == f"{GROUP}/v2"
    back = convert(tiny, hub, "v2", "v1")
    # omitempty: an empty name or list is written as absent
    assert back["spec"].get("items") == (items or None)
    assert back["spec"].get("name", "") == name


def test_a_panic_names_the_user_s_line_and_the_process_goes_on(tiny: GoConverter) -> None:
    with pytest.raises(GoPanic) as info:
        convert(tiny, thing("panic", ["a", "b"]))
    text = str(info.value)
    assert "panicked: cannot convert 2 items" in text
    assert "at api/v1/conv.go:" in text and "in (*Thing).ConvertTo" in text
    assert "controller-runtime" not in text and "runtime/debug" not in text
    with pytest.raises(GoPanic, match=r"index out of range \[0\] with length 0"):
        convert(tiny, thing("index"))
    assert convert(tiny, thing("fine", ["x"]))["spec"] == {"name": "fine", "items": ["x"]}


def test_a_returned_error_is_controller_runtime_s_failure_message(tiny: GoConverter) -> None:
    with pytest.raises(WebhookError) as info:
        convert(tiny, thing("error"))
    assert isinstance(info.value, ConverterError)
    # v1 -> v2 is ConvertTo alone: its error is the answer's whole message
    assert str(info.value).endswith('refused the conversion to tiny.example.com/v2: '
                                    'the name "error" is refused')


def test_a_converter_printing_to_stdout_does_not_corrupt_the_answers(tiny: GoConverter) -> None:
    for _ in range(3):
        assert convert(tiny, thing("print", ["a"]))["spec"]["items"] == ["a"]


def test_a_process_that_exits_is_a_failure_and_the_next_conversion_restarts_it(
        tiny: GoConverter) -> None:
    with pytest.raises(GoCrash, match=r"exited \(status 7\)"):
        convert(tiny, thing("exit"))
    assert convert(tiny, thing("again"))["spec"]["name"] == "again"


def test_a_conversion_that_never_returns_is_stopped_by_the_deadline(tiny: GoConverter) -> None:
    started = time.monotonic()
    with pytest.raises(ExampleDeadline), Alarm(0.5) as alarm:
        alarm.arm()
        convert(tiny, thing("loop"))
    assert time.monotonic() - started < 5
    # the stuck process was killed; a new one answers
    assert convert(tiny, thing("after"))["spec"]["name"] == "after"


def test_controller_runtime_refuses_a_conversion_to_the_same_version(tiny: GoConverter) -> None:
    with pytest.raises(WebhookError, match="conversion is not allowed between same type"):
        convert(tiny, thing("same"), "v1", "v1")


def gadget(size: str | None, version: str = "v1") -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": f"{GROUP}/{version}", "kind": "Gadget",
                           "metadata": {"name": "g", "namespace": "default"}}
    if size is not None:
        out["size" if version == "v1" else "inches"] = size
    return out


@settings(max_examples=20, deadline=None)
@given(inches=st.integers(1, 10**12))
def test_a_kind_without_a_hub_converts_by_the_scheme_s_functions(
        tiny: GoConverter, inches: int) -> None:
    """conversion-gen's pattern: functions registered on the scheme (scheme.Convert)."""
    v2 = convert(tiny, gadget(f"{inches}in"))
    assert (v2["apiVersion"], v2["inches"]) == (f"{GROUP}/v2", inches)
    assert convert(tiny, v2, "v2", "v1")["size"] == f"{inches}in"


def test_a_scheme_function_s_error_is_the_conversion_s_failure(tiny: GoConverter) -> None:
    with pytest.raises(WebhookError, match=r'refused the conversion.*parsing "big"'):
        convert(tiny, gadget("big"))


def test_the_webhook_serves_the_same_handler_and_goes_away_with_the_converter() -> None:
    """``webhook()``: the program as the CRD's HTTPS webhook, as a real API server calls
    it (a ConversionReview POSTed to /convert, its certificate checked against the CA);
    dropped with the converter: the server stopped, its certificates removed."""
    need_go()
    import gc
    import json
    import ssl
    import urllib.request
    from pathlib import Path

    converter = go_converter(TINY, ["./api/v1", "./api/v2"])
    address = converter.webhook()
    assert address is not None and address.ca_file is not None
    review = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
              "request": {"uid": "u1", "desiredAPIVersion": f"{GROUP}/v2",
                          "objects": [thing("served", ["a"])]}}
    request = urllib.request.Request(address.url, json.dumps(review).encode(),
                                     {"Content-Type": "application/json"})
    context = ssl.create_default_context(cafile=address.ca_file)
    with urllib.request.urlopen(request, context=context, timeout=10) as answer:
        body = json.load(answer)
    assert body["response"]["uid"] == "u1"
    assert body["response"]["convertedObjects"][0]["spec"] == {"name": "served",
                                                               "items": ["a"]}
    certs = Path(address.ca_file).parent
    server = converter._server
    assert server is not None
    del converter
    gc.collect()
    assert not certs.exists()
    assert server.wait(timeout=10) is not None
