"""``[api.overrides]``: strategy overrides by field path from compatfuzz.toml, for CRD,
pydantic and Cadwyn APIs (every draw honours them, a run still passes), and each mistake
named at its key with the fix."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from compatfuzz.errors import SchemaLoadError
from compatfuzz.roundtrip import Property, load_config, units

ROOT = Path(__file__).resolve().parents[2]
FROBBER = ROOT / "examples" / "frobber"
OVERRIDES = textwrap.dedent("""\
    [api.overrides]
    "spec.param" = { values = ["alpha", "beta"] }
    "spec.params[*]" = { regex = 'p[0-9]' }
    "spec.height" = { value = 7 }
    "spec.width" = { strategy = "fuzzers:small_widths" }
""")
FUZZERS = textwrap.dedent("""\
    from hypothesis import strategies as st

    small_widths = st.integers(1, 3)
""")


def _draws(strategy: Any, n: int = 40) -> list[Any]:
    seen: list[Any] = []

    @settings(max_examples=n, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw(value: Any) -> None:
        seen.append(value)

    draw()
    return seen


@pytest.fixture
def frobber(tmp_path: Path) -> Path:
    for name in ("crd.yaml", "conversion.py"):
        shutil.copy(FROBBER / name, tmp_path / name)
    (tmp_path / "fuzzers.py").write_text(FUZZERS)
    (tmp_path / "compatfuzz.toml").write_text(
        (FROBBER / "compatfuzz.toml").read_text() + OVERRIDES)
    return tmp_path


def test_a_crd_api_draws_what_its_overrides_say(frobber: Path) -> None:
    from compatfuzz.roundtrip._check._properties import strategy_for

    (api,) = load_config(frobber / "compatfuzz.toml")
    kind = api.kinds[0]
    v6 = [o["spec"] for o in _draws(strategy_for(api, kind, "v6"))]
    assert {s.get("param", "alpha") for s in v6} <= {"alpha", "beta"}
    assert {s.get("height", 7) for s in v6} == {7}
    assert {s.get("width", 1) for s in v6} <= {1, 2, 3}
    assert "param" in {k for s in v6 for k in s}  # the field is still drawn
    v7 = [o["spec"] for o in _draws(strategy_for(api, kind, "v7beta1"))]
    assert all(re.fullmatch(r"p[0-9]", p) for s in v7 for p in s.get("params", []))


def test_a_run_with_overrides_passes(frobber: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from compatfuzz.cli import main

    assert main(["fuzz", "--config", str(frobber / "compatfuzz.toml"), "--database", "none",
                 "--seed", "1", "--max-examples", "20"]) == 0, capsys.readouterr()


def test_a_pydantic_api_draws_what_its_overrides_say(tmp_path: Path) -> None:
    pytest.importorskip("pydantic")
    from tests.pydantic_api._shop import copy_example

    copy_example(tmp_path)
    config = tmp_path / "compatfuzz.toml"
    config.write_text(config.read_text() + '\n[api.overrides]\n'
                      '"customerName" = { values = ["Ada", "Grace"] }\n')
    (suite,) = load_config(config)
    unit = next(u for u in units(suite, [Property.ROUNDTRIP]) if u.versions[0] == "v1")
    assert {d["customerName"] for d in _draws(suite.strategy(unit))} <= {"Ada", "Grace"}


def test_a_cadwyn_api_draws_what_its_overrides_say(tmp_path: Path) -> None:
    pytest.importorskip("cadwyn")
    shop = ROOT / "examples" / "cadwyn_shop"
    shutil.copytree(shop / "shop", tmp_path / "shop",
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = tmp_path / "compatfuzz.toml"
    config.write_text((shop / "compatfuzz.toml").read_text() + '\n[api.overrides]\n'
                      '"name" = { values = ["Cher", "Ada Lovelace"] }\n'
                      '"first_name" = { value = "Grace" }\n')
    (suite,) = load_config(config)
    old = next(u for u in units(suite, [Property.ROUNDTRIP])
               if u.versions[0] == "2023-01-01")
    assert {d["name"] for d in _draws(suite.strategy(old))} <= {"Cher", "Ada Lovelace"}
    head = next(u for u in units(suite, [Property.VALID]) if u.versions[0] == "head")
    assert {d["first_name"] for d in _draws(suite.strategy(head))} == {"Grace"}


@pytest.mark.parametrize(("line", "pointer", "message", "fix"), [
    ('"spec.param" = ["a"]', "$.api[0].overrides['spec.param']",
     "an override is a table with one of values, value, regex, strategy, patch",
     'write "spec.kind" = { values = ["Deployment", "StatefulSet"] }'),
    ('"spec.param" = { values = [] }', "$.api[0].overrides['spec.param'].values",
     "values must be a non-empty array", "write "),
    ('"spec.param" = { regex = "a(" }', "$.api[0].overrides['spec.param'].regex",
     "regex 'a(' does not compile", "must match the whole value"),
    ('"spec.param" = { strategy = "fuzzers:nope" }',
     "$.api[0].overrides['spec.param'].strategy", "has no function 'nope'", ""),
    ('"spec.param" = { strategy = "fuzzers:FUZZ" }',
     "$.api[0].overrides['spec.param'].strategy", "Expected a SearchStrategy or a factory",
     "name a Hypothesis strategy"),
    ('"$.spec.param" = { value = 1 }', "$.api[0].overrides['$.spec.param']",
     "path globs are relative to the root object", "field paths are relative"),
])
def test_a_mistake_names_the_key_and_the_fix(frobber: Path, line: str, pointer: str,
                                             message: str, fix: str) -> None:
    (frobber / "fuzzers.py").write_text(FUZZERS + "FUZZ = 3\n")
    config = frobber / "compatfuzz.toml"
    config.write_text((FROBBER / "compatfuzz.toml").read_text()
                      + f"\n[api.overrides]\n{line}\n")
    with pytest.raises(SchemaLoadError) as info:
        load_config(config)
    text = str(info.value)
    assert f"at {pointer}" in text, text
    assert message in text and fix in text, text


def test_a_protobuf_api_says_overrides_do_not_apply(tmp_path: Path) -> None:
    pytest.importorskip("google.protobuf")
    (tmp_path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "c"\nproto = "protos/"\n[api.overrides]\n"x" = { value = 1 }\n')
    with pytest.raises(SchemaLoadError) as info:
        load_config(tmp_path / "compatfuzz.toml")
    assert "at $.api[0].overrides" in str(info.value)
    assert "validate rules" in str(info.value)
