"""Issue 22, item 2 (and the CEL part of item 12): CEL rules are bounded as the API server
bounds them.

Seven nested ``.all()`` loops over constant lists hung ``sample``, ``fuzz`` and ``diff``;
four over a 50-item list reached 20 GB. A CRD whose rule the server would refuse for its
estimated cost, or whose rule does not parse, is now an input error (exit 2, the file, the
JSON path of the rule, the estimate and the limit, the fix); evaluation is metered, so a
value that would cost too much is rejected instead of hanging or eating memory. Commands
run in a child process with a timeout and a 1 GiB address-space limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compatfuzz.apiserver import validation_errors
from compatfuzz.cli import main
from compatfuzz.schema import Schema
from compatfuzz.strategies._cel import COST_EXCEEDED, compile_rules

resource = pytest.importorskip("resource")  # POSIX

TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
FIFTY = "[" + ", ".join(str(i) for i in range(50)) + "]"


def _nested(items: str, depth: int) -> str:
    names = "abcdefghij"[:depth]
    body = " + ".join(names) + " >= 0"
    for name in reversed(names):
        body = f"{items}.all({name}, {body})"
    return body


def _limited() -> None:
    """In the child: at most 1 GiB of address space (four loops over 50 items took 20 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _run(argv: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_limited, check=False)


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run(["-m", "compatfuzz.cli", *argv], cwd)


def _crd(tmp_path: Path, rule: str, name: str = "crd.json", **spec: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "spec": {"type": "object", "properties": {"a": {"type": "integer"}}, **spec,
                 "x-kubernetes-validations": [{"rule": rule}]}}}))
    return path


def _project(tmp_path: Path) -> None:
    (tmp_path / "conv.py").write_text(
        "def convert(obj, desired):\n    return {**obj, 'apiVersion': desired}\n")
    (tmp_path / "compatfuzz.toml").write_text(
        '[[api]]\nname = "t"\nkind = "T"\ngroup = "g.example.com"\nconvert = "conv:convert"\n'
        'schemas = { v1 = "crd.json", v2 = "other.json" }\n')
    (tmp_path / "other.json").write_text(json.dumps({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}}}))


RULE_PATH = "$.properties.spec.x-kubernetes-validations[0].rule"


def _refusal_said(done: subprocess.CompletedProcess[str]) -> None:
    said = (f"crd.json at {RULE_PATH}: Forbidden: estimated rule cost exceeds budget by "
            "factor of ")  # the API server's words
    assert said in done.stderr, done.stderr
    assert "against a limit of 10,000,000" in done.stderr
    assert "fix: add maxItems" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.extended  # three commands on a refused CRD; the refusal is tested in-process
def test_seven_nested_loops_are_refused_by_fuzz_and_diff(tmp_path: Path) -> None:
    """fuzz and diff judge the CRD as the API server would: refused. sample only
    generates, which needs no estimate: it says the refusal and still prints objects,
    within the time limit (it hung, killed by the timeout, on the old code)."""
    _crd(tmp_path, _nested(TEN, 7))
    _project(tmp_path)
    for argv in (["fuzz", "--database", "none", "--property", "roundtrip", "--max-examples",
                  "5"],
                 ["diff", "crd.json", "crd.json"]):
        done = _cli(*argv, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        _refusal_said(done)
    done = _cli("sample", "crd.json", "-n", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "compatfuzz sample: warning:" in done.stderr
    _refusal_said(done)
    assert "objects are generated all the same" in done.stderr
    assert len(done.stdout.splitlines()) == 1


def test_four_loops_over_fifty_items_do_not_eat_memory(tmp_path: Path) -> None:
    _crd(tmp_path, _nested(FIFTY, 4))
    done = _cli("sample", "crd.json", "-n", "3", cwd=tmp_path)  # 20 GB on the old code
    assert done.returncode == 0, done.stderr  # under _limited's memory cap and timeout
    assert "estimated rule cost" in done.stderr and "MemoryError" not in done.stderr
    assert len(done.stdout.splitlines()) == 3


def test_the_estimate_uses_max_items_and_says_how_often_a_rule_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "crd.json"
    item = {"type": "object", "properties": {"n": {"type": "string"}},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}]}
    # a map of unbounded lists, under an unbounded list: Kubernetes refuses it
    path.write_text(json.dumps({"type": "object", "properties": {"l": {
        "type": "array", "items": {"type": "object", "additionalProperties": {
            "type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}],
        }}}, "m": item}}))
    assert main(["sample", str(path), "-n", "1"]) == 0  # a warning: generation goes on
    err = capsys.readouterr().err
    assert "$.properties.l.items.additionalProperties.x-kubernetes-validations[0]" in err
    assert "per evaluation x up to" in err  # the cardinality Kubernetes multiplies by
    bounded = {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 20},
               "x-kubernetes-validations": [{"rule": "self.all(x, self.exists_one(y, x == y))"}]}
    path.write_text(json.dumps({"type": "object", "properties": {"l": {
        "type": "array", "maxItems": 4, "items": {"type": "object", "maxProperties": 3,
                                                  "additionalProperties": bounded}}}}))
    assert main(["sample", str(path), "-n", "3", "--seed", "1"]) == 0, capsys.readouterr().err


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(1, 3))
def test_the_estimate_grows_with_max_items(small: int, large: int, depth: int) -> None:
    from compatfuzz.strategies._cel_cost import STATIC_RULE_LIMIT, rule_cost

    small, large = min(small, large), max(small, large)
    rule = "self.all(a, self.all(b, self.all(c, a + b + c > 0)))" if depth == 3 else (
        "self.all(a, self.all(b, a + b > 0))" if depth == 2 else "self.all(a, a > 0)")

    def cost(n: int) -> int:
        est = rule_cost(rule, {"type": "array", "maxItems": n, "items": {"type": "integer"}})
        assert est is not None
        return est

    assert cost(small) <= cost(large)
    assert cost(large) >= large ** depth  # at least one unit per innermost iteration
    unbounded = rule_cost(rule, {"type": "array", "items": {"type": "integer"}})
    assert unbounded is not None and unbounded >= cost(large)
    # ~1.5 million integers fit a request: one loop over them fits the budget, two do not
    assert (unbounded > STATIC_RULE_LIMIT) == (depth > 1)


def test_a_rule_within_budget_still_filters(tmp_path: Path) -> None:
    rule = "self.all(x, x.startsWith('a'))"
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"type": "object", "required": ["l"], "properties": {"l": {
        "type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10},
        "x-kubernetes-validations": [{"rule": rule}]}}}))
    done = _cli("sample", "ok.json", "-n", "20", "--seed", "3", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    values = [json.loads(line)["l"] for line in done.stdout.splitlines()]
    assert len(values) == 20 and all(s.startswith("a") for v in values for s in v)
    assert any(values)  # not only empty lists


def test_a_rule_that_does_not_parse_is_an_input_error(tmp_path: Path) -> None:
    _crd(tmp_path, "self.a >")
    _project(tmp_path)
    done = _cli("sample", "crd.json", "-n", "2", cwd=tmp_path)  # exit 0 with a warning before
    assert done.returncode == 2, done.stderr
    assert f"crd.json at {RULE_PATH}: the x-kubernetes-validations rule does not compile" \
        in done.stderr
    assert "syntax error at line 1, column 8" in done.stderr
    assert "    self.a >\n           ^" in done.stderr and "fix:" in done.stderr
    done = _cli("fuzz", "--database", "none", "--property", "roundtrip", "--max-examples", "5",
                cwd=tmp_path)
    assert done.returncode == 2 and "does not compile" in done.stderr, done.stderr
    done = _cli("diff", "crd.json", "crd.json", cwd=tmp_path)
    assert done.returncode == 2 and RULE_PATH in done.stderr, done.stderr


def test_optional_syntax_is_still_only_unsupported(tmp_path: Path) -> None:
    """cel-python cannot parse ``self.?a``, but the API server can: a warning, not a refusal."""
    _crd(tmp_path, "self.?a.orValue(1) > 0")
    done = _cli("sample", "crd.json", "-n", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "optional syntax" in done.stderr


def test_evaluation_past_the_limit_rejects_the_value() -> None:
    from compatfuzz.strategies._cel import COST_EXCEEDED

    rules = compile_rules({"type": "array", "items": {"type": "integer"},
                           "x-kubernetes-validations": [
                               {"rule": "self.all(a, self.all(b, a + b >= 0))"}]},
                          cost_limit=2_000)
    assert rules.check([1, 2, 3])
    assert not rules.check(list(range(100)))  # 10,000 iterations: past 2,000 units
    failed, spent = rules.outcome(list(range(100)))
    assert failed == (("self.all(a, self.all(b, a + b >= 0))", COST_EXCEEDED),)
    assert spent == 2_000


def test_a_growing_string_is_stopped_before_it_is_built(tmp_path: Path) -> None:
    """Nine chained ``replace`` calls make 10**10 characters; the meter charges each result
    before it exists, so the check says no in a small, bounded process."""
    rule = "self" + ".replace('a', 'aaaaaaaaaa')" * 9 + ".size() > 0"
    script = textwrap.dedent(f"""
        from compatfuzz.strategies._cel import COST_EXCEEDED, compile_rules
        rules = compile_rules({{"type": "string",
                               "x-kubernetes-validations": [{{"rule": {rule!r}}}]}})
        print(rules.check("aaaaaaaaaa"))
    """)
    done = _run(["-c", script], tmp_path)  # MemoryError under 1 GiB on the old code
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_api_server_check_says_cost_budget_exceeded() -> None:
    rule = "self.s" + ".replace('a', 'aaaaaaaaaa')" * 3 + ".size() > 0"
    schema = Schema({"type": "object", "properties": {"s": {"type": "string"}},
                     "x-kubernetes-validations": [{"rule": rule}]})
    assert validation_errors({"s": "a"}, schema) == []
    errors = validation_errors({"s": "a" * 10_000}, schema)  # the rule held on the old code
    assert errors == [f"<root>: cost budget exceeded (rule: {rule})"]


@pytest.mark.slow  # ~8 s over the whole corpus; the cost rules above run by default
def test_no_real_crd_is_refused(corpus_dir: Path) -> None:
    """Real API servers accept these CRDs, so the estimate must too (karpenter's rules on
    map keys, ``int(string)`` and ``startsWith`` were refused by a first, stricter port)."""
    from compatfuzz.schema import load_crds
    from compatfuzz.strategies._cel import check_rules

    files = sorted([*corpus_dir.glob("crds/**/*.yaml"), *corpus_dir.glob("crd-releases/**/*.yaml")])
    checked = 0
    for path in files:
        for crd in load_crds(path):
            for version in crd.versions:
                if version.schema is not None:
                    check_rules(version.schema)
                    checked += 1
    assert checked >= 170


def test_a_rule_under_the_estimate_but_slow_in_python_does_not_stall_generation(
        tmp_path: Path) -> None:
    """Six nested loops over nine items pass Kubernetes' estimate, yet a full evaluation
    costs seconds in cel-python, and generation retried such values until the run's time
    ran out (issue 22 audit). Generation now gives up filtering on that rule, says so,
    and the run finishes."""
    loops = "a + b + c + d + e + f >= 0"
    for var in "fedcba":
        loops = f"self.l.all({var}, {loops})"
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"l": {"type": "array", "maxItems": 9, "items": {
            "type": "integer", "minimum": 0, "maximum": 100}}},
        "x-kubernetes-validations": [{"rule": loops}]}}}))
    done = _run(["-m", "compatfuzz.cli", "sample", str(path), "-n", "200", "--seed", "1"],
                tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 200
    assert "cost more than 20,000 to evaluate on 3 generated values" in done.stderr


def _loop_cost(body: str, items: int) -> int:
    node = {"type": "object", "properties": {"l": {"type": "array", "items": {
        "type": "integer"}}}, "x-kubernetes-validations": [{"rule": f"self.l.all(a, {body})"}]}
    return compile_rules(node).outcome({"l": list(range(items))})[1]


@given(st.integers(min_value=0, max_value=30))
@settings(max_examples=15, deadline=None)
def test_the_meter_charges_identifiers_under_operators(items: int) -> None:
    """cel-go charges 1 per identifier and 1 per ``+``/``>=`` (interpreter/runtimecost.go):
    6 per element for ``a + a + a >= 0`` over what an empty body costs. The meter used to
    charge only the calls (3), because cel-python visits an operator's operands without
    going through ``visit``; a loop ran 2 to 5 times past the server's stopping point."""
    assert _loop_cost("a + a + a >= 0", items) - _loop_cost("true", items) == 6 * items


def test_a_rule_too_costly_to_filter_is_given_up_by_every_rule_set() -> None:
    """The node's filter, each repair of construction and the check of the nodes below
    compile the same rule separately; once it has run past the generation limit a few
    times, none of them evaluates it again (each used to pay its own seconds)."""
    from compatfuzz.strategies._cel import too_costly

    rule = "self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))"
    node = {"type": "object", "properties": {"l": {"type": "array", "items": {
        "type": "integer"}}}, "x-kubernetes-validations": [{"rule": rule}]}
    value = {"l": list(range(20))}  # 8,000 inner iterations: past a 500-unit limit
    first = compile_rules(node, cost_limit=500, give_up_after=2)
    second = compile_rules(node, cost_limit=500, give_up_after=2)
    plain = compile_rules(node, cost_limit=500)
    assert not first.check(value) and first.exceeded[0] == 1
    assert not too_costly(rule, 2)
    assert not second.check({"l": list(range(21))})
    assert too_costly(rule, 2)
    # given up: not evaluated (no cost), so it no longer rejects the value
    assert first.outcome({"l": list(range(22))}) == ((), 0)
    assert second.check({"l": list(range(23))})
    # a rule set without give_up_after (the valid property's) still judges it
    assert plain.outcome({"l": list(range(24))})[0] == ((rule, COST_EXCEEDED),)
