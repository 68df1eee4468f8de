"""Issue 22, item 11: whatever a converter returns, raises or does to its own process, its
unit fails with what went wrong (exit 1), and the run goes on and ends.

* output no webhook could send (a list that contains itself, a non-string key, a dict
  subclass whose ``items()`` raises) fails the unit with a counterexample and names what
  and where, instead of a ``RecursionError`` error (exit 2) or a diff that hides the cause;
* an exception whose ``__str__`` raises and ``GeneratorExit`` are failures, not errors;
* ``KeyboardInterrupt`` raised by a converter, or a SIGINT/SIGTERM it sends its own
  process, fails its unit (``--workers 1`` included) instead of ending the run as
  interrupted (130); a real SIGTERM from outside still interrupts it;
* ``os._exit(0)`` in a converter with ``--workers 1`` fails its unit instead of exiting 0;
* non-daemon threads left behind do not keep the process alive after the run.
"""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import ConverterError
from compatfuzz.roundtrip._check import _converters
from tests.faults._project import command, fuzz, project, wait_for

pytest_plugins = ["pytester"]

NOT_JSON = {
    "circular": ("""
        def convert(obj, desired):
            loop = []
            loop.append(loop)
            return {**obj, "apiVersion": desired, "spec": {"x": loop}}
    """, "returned a list that contains itself at spec.x (spec.x[0] is spec.x again)"),
    "int key": ("""
        def convert(obj, desired):
            return {**obj, "apiVersion": desired, "spec": {1: 2}}
    """, "returned a dict key 1 (int) at spec; JSON object keys are strings"),
    "raising dict": ("""
        class Sneaky(dict):
            def items(self):
                raise RuntimeError("no items for you")

        def convert(obj, desired):
            out = Sneaky()
            dict.update(out, obj, apiVersion=desired)
            return out
    """, "returned a Sneaky (a dict subclass) at the top level whose items() raised "
         "RuntimeError: no items for you"),
    "raising __str__": ("""
        class Mute(Exception):
            def __str__(self):
                raise RuntimeError("no words")

        def convert(obj, desired):
            raise Mute()
    """, "convert() raised Mute: <its __str__ raised RuntimeError>"),
    "GeneratorExit": ("""
        def convert(obj, desired):
            raise GeneratorExit
    """, "convert() raised GeneratorExit (converting T"),
}

SELF_INFLICTED = {
    "raises KeyboardInterrupt": ("""
        def convert(obj, desired):
            raise KeyboardInterrupt
    """, "convert() raised KeyboardInterrupt (raised by the converter, or a SIGINT"),
    "sends itself SIGINT": ("""
        def convert(obj, desired):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            return {**obj, "apiVersion": desired}
    """, "convert() raised KeyboardInterrupt"),
    "sends itself SIGTERM": ("""
        def convert(obj, desired):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            return {**obj, "apiVersion": desired}
    """, "was killed by SIGTERM (a converter signalled its own process"),
    "calls os._exit(0)": ("""
        def convert(obj, desired):
            os._exit(0)
    """, "exited with status 0 (a converter called os._exit"),
}


def _failed_with(done: Any, needle: str) -> list[dict[str, Any]]:
    """Both roundtrip units failed, naming ``needle``, and the run completed."""
    assert done.returncode == 1, done.stderr
    assert done.report["status"] == "failed", done.report
    assert done.report["stop_reason"] == "completed"
    units = done.report["units"]
    assert [u["status"] for u in units] == ["failed", "failed"], units
    for unit in units:
        text = unit["message"] + json.dumps(unit.get("counterexample") or {})
        assert needle in text, text
    assert "interrupted" not in done.stderr.splitlines()[-1]
    return units  # type: ignore[no-any-return]


# dict subclasses that raise take the same path as the others (extended: in CI)
@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.extended)
                                  if c.startswith("raising") else c for c in NOT_JSON])
def test_output_no_webhook_could_send_fails_its_unit_with_a_counterexample(
        tmp_path: Path, case: str) -> None:
    converter, needle = NOT_JSON[case]
    done = fuzz(project(tmp_path, converter), "--property", "roundtrip",
                "--max-examples", "5", timeout=90)
    for unit in _failed_with(done, needle):
        cx = json.loads(Path(unit["counterexample_file"]).read_text())
        assert cx["error_type"] == "ConverterError" and needle in cx["error"]
        assert cx["object"]["kind"] == "T"


@pytest.mark.parametrize(("case", "workers"), [
    *((case, "1") for case in SELF_INFLICTED),
    # workers already survived SIGTERM and os._exit; they stopped the run on the others
    *(pytest.param(case, "2", marks=pytest.mark.extended)
      for case in ("raises KeyboardInterrupt", "sends itself SIGINT")),
])
def test_what_a_converter_does_to_its_process_fails_only_its_unit(
        tmp_path: Path, case: str, workers: str) -> None:
    converter, needle = SELF_INFLICTED[case]
    done = fuzz(project(tmp_path, converter), "--property", "roundtrip",
                "--max-examples", "5", "--workers", workers, timeout=90)
    _failed_with(done, needle)


def test_leftover_threads_do_not_keep_the_run_alive(tmp_path: Path) -> None:
    """A thread the converter module starts at import (in the CLI's own process) and one
    each conversion starts (in the worker): the run ends with its real status."""
    config = project(tmp_path, """
        import threading

        threading.Thread(target=time.sleep, args=(3600,), name="importer").start()

        def convert(obj, desired):
            threading.Thread(target=time.sleep, args=(3600,)).start()
            return {**obj, "apiVersion": desired}
    """)
    done = fuzz(config, "--property", "roundtrip", "--max-examples", "3", timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.report["status"] == "passed"
    assert "warning: 1 non-daemon thread ('importer') still running" in done.stderr
    assert "exiting with status 0 without waiting for them" in done.stderr


def test_sigterm_from_outside_still_interrupts_an_isolated_workers_1_run(
        tmp_path: Path) -> None:
    """Units run in a child process with ``--workers 1`` now; the run must still stop,
    as interrupted, when it is told to (a regression guard: this held before too)."""
    config = project(tmp_path, """
        def convert(obj, desired):
            time.sleep(0.2)
            return {**obj, "apiVersion": desired}
    """)
    report = tmp_path / "report.json"
    proc = subprocess.Popen(command(config, "--duration", "20m"), cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(report, lambda d: d.get("running"))
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    doc = json.loads(report.read_text())
    assert doc["stop_reason"] == "interrupted" and doc["status"] == "interrupted"


def test_pytest_treats_a_converters_keyboard_interrupt_as_pytest_treats_a_tests(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """In pytest the converter runs in pytest's process, where a ``KeyboardInterrupt``
    may be the user's Ctrl-C: like a test raising one, it ends the session (exit 2),
    showing where it was raised.  A non-JSON output fails its test with the cause."""
    project(pytester.path, """
        def convert(obj, desired):
            if os.environ.get("INTERRUPT"):
                raise KeyboardInterrupt("from the converter")
            return {**obj, "apiVersion": desired, "spec": {1: 2}}
    """)
    monkeypatch.setenv("INTERRUPT", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "--compatfuzz-max-examples=5")
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    assert "KeyboardInterrupt" in output and "conv.py:6" in output
    monkeypatch.delenv("INTERRUPT")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "--compatfuzz-max-examples=5")
    output = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output
    assert "returned a dict key 1 (int) at spec" in output


# -- plain_json, the check behind the first test ---------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner,
                                                                 max_size=4),
    max_leaves=30)


@given(JSON)
def test_json_values_come_back_equal_and_unshared(value: Any) -> None:
    copy = _converters.plain_json(value, "convert()")
    assert json.dumps(copy, sort_keys=True) == json.dumps(value, sort_keys=True)
    if isinstance(value, (dict, list)):
        assert copy is not value


@given(JSON.filter(lambda v: isinstance(v, dict)),
       st.sampled_from([1, 2.5, None, (1,), b"k", frozenset()]))
def test_a_non_string_key_anywhere_is_named(value: dict[str, Any], key: Any) -> None:
    value = {"spec": {"inner": [value]}}
    value["spec"]["inner"][0][key] = "x"
    with pytest.raises(ConverterError, match=r"a dict key .* at spec\.inner\[0\]; "
                                             "JSON object keys are strings"):
        _converters.plain_json(value, "convert()")


@given(st.sampled_from([math.nan, math.inf, -math.inf]))
def test_nan_and_infinity_are_refused(number: float) -> None:
    with pytest.raises(ConverterError, match=r"at spec\.n; JSON has no NaN or Infinity"):
        _converters.plain_json({"spec": {"n": number}}, "convert()")


def test_a_shared_but_acyclic_value_is_fine() -> None:
    shared = {"a": [1]}
    assert _converters.plain_json({"x": shared, "y": [shared, shared]}, "convert()") == {
        "x": {"a": [1]}, "y": [{"a": [1]}, {"a": [1]}]}


@pytest.mark.parametrize(("converter", "needle"), [
    ("os._exit(0)", "exited with status 0"),
    ("raise KeyboardInterrupt", "raised KeyboardInterrupt"),
])
def test_replay_checks_in_a_child_too(tmp_path: Path, converter: str, needle: str) -> None:
    """``--replay`` of a counterexample whose converter exits 0 used to print nothing more
    and exit 0, which CI reads as "fixed"."""
    config = project(tmp_path, f"""
        def convert(obj, desired):
            {converter}
    """)
    saved = tmp_path / "cx.json"
    saved.write_text(json.dumps({"api": "t", "kind": "T", "property": "roundtrip",
                                 "versions": ["v1", "v2"],
                                 "object": {"apiVersion": "g.example.com/v1", "kind": "T"}}))
    done = subprocess.run([sys.executable, "-m", "compatfuzz.cli", "fuzz", "--config",
                           str(config), "--replay", str(saved)], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, check=False)
    assert done.returncode == 1, done.stderr
    assert "still failing" in done.stderr and needle in done.stderr


if sys.platform == "win32":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="signals and process groups are POSIX")
