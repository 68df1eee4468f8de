"""``compatfuzz diff --policy``: built-in profiles, crdify configurations, our policy files
(issue 19, item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compatfuzz.cli import main
from compatfuzz.compat import (
    RULES,
    Finding,
    Impact,
    Policy,
    Severity,
    diff,
    load_crdify,
    load_profile,
    resolve_policy,
)
from compatfuzz.compat._profiles import CRDIFY_VALIDATIONS
from compatfuzz.errors import SchemaLoadError

ENFORCEMENT = {"Error": Severity.ERROR, "Warn": Severity.WARNING, "None": Severity.OFF}
LEVEL = {"error": Severity.ERROR, "warn": Severity.WARNING, "ignore": Severity.OFF}


def _schema(*, maximum: int = 10, enum: tuple[str, ...] = ("a", "b"),
            required: tuple[str, ...] = ("name",)) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {
        "type": "object", "required": list(required), "properties": {
            "name": {"type": "string"},
            "replicas": {"type": "integer", "maximum": maximum},
            "mode": {"type": "string", "enum": list(enum)}}}}}


def _write(tmp_path: Path, name: str, content: Any) -> str:
    p = tmp_path / name
    p.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(p)


def _finding(rule: str, keyword: str = "", old: Any = "a", new: Any = "b") -> Finding:
    return Finding(rule, "spec.x", old, new, "m", frozenset(), keyword=keyword)


def _decide(policy: Policy, f: Finding) -> tuple[Severity, str]:
    return policy.decide(f, breaking=True, default=RULES[f.rule].severity)


# -- built-in profiles on small hand-made pairs -------------------------------------------


def test_enum_addition_fails_only_under_kubernetes_strict() -> None:
    old, new = _schema(), _schema(enum=("a", "b", "c"))
    strict = diff(old, new, policy=resolve_policy("kubernetes-strict"), dynamic=False)
    k8s = diff(old, new, policy=resolve_policy("kubernetes"), dynamic=False)
    gw = diff(old, new, policy=resolve_policy("gateway-api"), dynamic=False)
    [fs] = [f for f in strict.findings if f.rule == "enum-value-added"]
    [fk] = [f for f in k8s.findings if f.rule == "enum-value-added"]
    [fg] = [f for f in gw.findings if f.rule == "enum-value-added"]
    assert (fs.severity, strict.exit_code) == (Severity.ERROR, 1)
    assert fs.policy == ("built-in profile kubernetes-strict: enum-value-added = error "
                         "(its severity)")
    assert (fk.severity, k8s.exit_code, fk.impact) == (Severity.WARNING, 0, Impact.READS)
    assert fk.policy.startswith("built-in profile kubernetes: enum-value-added (a loosening) "
                                "= warn (it breaks only old readers; --fail-on-impact reads")
    assert (fg.severity, gw.exit_code) == (Severity.WARNING, 0)
    assert "kubernetes-sigs/gateway-api crdify.yaml: enum additionPolicy: Allow" in fg.policy


def test_gateway_api_allows_required_made_optional_but_not_a_tighter_bound() -> None:
    old = _schema()
    loosened = diff(old, _schema(required=()), policy=resolve_policy("gateway-api"),
                    dynamic=False)
    [f] = loosened.findings
    assert (f.rule, f.severity, loosened.exit_code) == ("required-removed", Severity.WARNING, 0)
    assert "versioning.md" in f.policy and "Making required fields optional" in f.policy
    tighter = diff(old, _schema(maximum=5), policy=resolve_policy("gateway-api"),
                   dynamic=False)
    assert [(f.rule, f.severity) for f in tighter.breaking] == [
        ("bound-tightened", Severity.ERROR)]


@settings(max_examples=25, deadline=None)
@given(maximum=st.integers(0, 20), extra=st.sampled_from([(), ("c",)]),
       required=st.sampled_from([(), ("name",), ("name", "mode")]))
def test_kubernetes_strict_keeps_every_rules_severity(maximum: int, extra: tuple[str, ...],
                                                      required: tuple[str, ...]) -> None:
    """The strict profile changes no verdict: each finding's severity is its rule's own
    (or info where it does not break), and it says so; the default profile differs only
    on loosenings, which warn."""
    old, new = _schema(), _schema(maximum=maximum, enum=("a", "b", *extra),
                                  required=required)
    strict = diff(old, new, policy=resolve_policy("kubernetes-strict"), dynamic=False)
    default = diff(old, new, policy=resolve_policy("kubernetes"), dynamic=False)
    assert [f.location for f in strict.findings] == [f.location for f in default.findings]
    for f, d in zip(strict.findings, default.findings, strict=True):
        expected = (f.suggested or RULES[f.rule].severity) if f.breaking else Severity.INFO
        assert f.severity is expected
        assert f.policy.startswith(f"built-in profile kubernetes-strict: {f.rule} = {expected}")
        assert d.severity is (Severity.WARNING if f.breaking and f.loosening else expected)


# -- crdify configurations ----------------------------------------------------------------

NAMES = sorted(n for n, pairs in CRDIFY_VALIDATIONS.items() if pairs)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chosen=st.dictionaries(st.sampled_from(NAMES), st.sampled_from(list(ENFORCEMENT))),
       enum_allow=st.booleans(), unhandled=st.none() | st.sampled_from(list(ENFORCEMENT)))
def test_crdify_file_round_trip(tmp_path: Path, chosen: dict[str, str], enum_allow: bool,
                                unhandled: str | None) -> None:
    """Every rule a crdify validation covers ends with the severity the file gave it,
    quoting the file's line of that validation."""
    lines = ["# written by the test", "validations:"]
    for name, enforcement in chosen.items():
        lines += [f"  - name: {name}", f"    enforcement: {enforcement}"]
        if name == "enum" and enum_allow:
            lines += ["    configuration:", "      additionPolicy: Allow"]
    if unhandled:
        lines.append(f"unhandledEnforcement: {unhandled}")
    path = tmp_path / "crdify.yaml"
    path.write_text("\n".join(lines) + "\n")
    policy = load_crdify(path)
    for name, pairs in CRDIFY_VALIDATIONS.items():
        for rule, keyword in pairs:
            sev, source = _decide(policy, _finding(rule, keyword))
            if name not in chosen:  # crdify's default for an unlisted validation: Error
                assert (sev, source) == (Severity.ERROR, f"crdify defaults: {name} = Error "
                                         f"(not listed in {path})")
                continue
            want = ENFORCEMENT[chosen[name]]
            if (name, rule, enum_allow) == ("enum", "enum-value-added", True) \
                    and want is not Severity.OFF:
                want = Severity.WARNING
                assert source.endswith("additionPolicy: Allow (enum additionPolicy: Allow)")
            else:
                line = lines.index(f"  - name: {name}") + 1
                assert source.startswith(f"{path}:{line}: - name: {name}"), source
            assert sev is want, (name, rule, keyword)
    sev, source = _decide(policy, _finding("list-type-changed"))
    assert sev is ENFORCEMENT[unhandled or "Error"]
    assert source.startswith(f"{path}:{len(lines)}: unhandledEnforcement" if unhandled
                             else "crdify defaults: unhandledEnforcement = Error")


def test_crdify_defaults_pass_what_crdify_passes(tmp_path: Path) -> None:
    """crdify flags no added field and no relaxed bound: a crdify user switching keeps
    their exit codes; the findings warn, quoting why."""
    policy = load_crdify(_write(tmp_path, "c.yaml", "validations: []\n"))
    for rule in ("field-added", "bound-relaxed", "required-removed"):
        sev, source = _decide(policy, _finding(rule))
        assert sev is Severity.WARNING and source.startswith("crdify defaults:")
    assert _decide(policy, _finding("pattern-changed", old="^a$", new=None))[0] is Severity.WARNING
    assert _decide(policy, _finding("pattern-changed", old="^a$", new="^b$"))[0] is Severity.ERROR
    assert _decide(policy, _finding("bound-tightened", "maxLength"))[0] is Severity.ERROR
    # crdify's exclusiveMaximum check flags a removed exclusiveMaximum, unlike min/max
    assert _decide(policy, _finding("bound-relaxed", "exclusiveMaximum"))[0] is Severity.ERROR
    # unhandledEnforcement does not override crdify's own allOf check
    policy = load_crdify(_write(tmp_path, "d.yaml", "unhandledEnforcement: None\n"))
    assert _decide(policy, _finding("unhandled", "allOf"))[0] is Severity.ERROR
    assert _decide(policy, _finding("unhandled", "items"))[0] is Severity.OFF


def test_gateway_api_crdify_config_through_the_cli(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # kubernetes-sigs/gateway-api crdify.yaml: description None, enum additionPolicy Allow
    cfg = _write(tmp_path, "crdify.yaml", (
        "validations:\n  - name: description\n    enforcement: None\n"
        "  - name: enum\n    enforcement: Error\n    configuration:\n"
        "      additionPolicy: Allow\n"))
    old = _write(tmp_path, "old.json", _schema())
    new = _write(tmp_path, "new.json", _schema(enum=("a", "b", "c")))
    assert main(["diff", old, new, "--policy", f"crdify:{cfg}", "--no-dynamic"]) == 0
    out = capsys.readouterr().out
    assert "WARNING  enum-value-added" in out
    assert f"policy: {cfg}:7: additionPolicy: Allow (enum additionPolicy: Allow)" in out
    assert "1 allowed with a warning" in out


@pytest.mark.parametrize(("text", "pointer", "hint"), [
    ("validations:\n  - name: enumm\n    enforcement: Error\n", "$.validations[0].name",
     "did you mean 'enum'?"),
    ("validations:\n  - name: enum\n    enforcement: error\n",
     "$.validations[0].enforcement", "Error, Warn or None"),
    ("validations:\n  - name: enum\n", "$.validations[0].enforcement",
     "add `enforcement: Error`"),
    ("validations:\n  - name: enum\n    enforcement: Error\n    configuration:\n"
     "      additionPolicy: Sometimes\n", "$.validations[0].configuration.additionPolicy",
     "Allow or Disallow"),
    ("validations:\n  - name: required\n    enforcement: Error\n    configuration:\n"
     "      additionPolicy: Allow\n", "$.validations[0].configuration.additionPolicy",
     "takes no configuration"),
    ("unhandledEnforcment: Warn\n", "$.unhandledEnforcment", "did you mean"),
    ("unhandledEnforcement: Sometimes\n", "$.unhandledEnforcement", "Error, Warn or None"),
])
def test_bad_crdify_files_name_file_path_and_fix(tmp_path: Path, text: str, pointer: str,
                                                 hint: str) -> None:
    path = _write(tmp_path, "crdify.yaml", text)
    with pytest.raises(SchemaLoadError) as info:
        load_crdify(path)
    message = str(info.value)
    assert message.startswith(f"{path} at {pointer}:"), message
    assert hint in message


# -- our own policy files -----------------------------------------------------------------

RULE_IDS = sorted(RULES)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(levels=st.dictionaries(st.sampled_from(RULE_IDS), st.sampled_from(list(LEVEL)),
                              max_size=8),
       toml=st.booleans(), base=st.sampled_from(["kubernetes", "gateway-api"]))
def test_policy_file_round_trip(tmp_path: Path, levels: dict[str, str], toml: bool,
                                base: str) -> None:
    if toml:
        lines = [f'extends = "{base}"', "", "[rules]",
                 *(f'"{rule}" = "{level}"' for rule, level in levels.items())]
    else:
        lines = [f"extends: {base}", "rules:",
                 *(f"  {rule}: {level}" for rule, level in levels.items())]
        if not levels:
            lines[-1] = "rules: {}"
    path = tmp_path / ("policy.toml" if toml else "policy.yaml")
    path.write_text("\n".join(lines) + "\n")
    policy = load_profile(path)
    gateway = resolve_policy("gateway-api")
    for rule in RULE_IDS:
        sev, source = _decide(policy, _finding(rule))
        if rule in levels:
            line = next(i for i, t in enumerate(lines, 1) if t.lstrip().lstrip('"')
                        .startswith(rule + ('"' if toml else ":")))
            assert (sev, source) == (LEVEL[levels[rule]],
                                     f"{path}:{line}: {lines[line - 1].strip()}")
        elif base == "gateway-api":
            assert (sev, source) == _decide(gateway, _finding(rule))
        else:
            assert sev is RULES[rule].severity


def test_policy_file_keyword_entry_narrows_a_rule(tmp_path: Path) -> None:
    path = _write(tmp_path, "p.toml", '[rules]\n"bound-tightened[maxProperties]" = "warn"\n')
    policy = load_profile(path)
    assert _decide(policy, _finding("bound-tightened", "maxProperties"))[0] is Severity.WARNING
    assert _decide(policy, _finding("bound-tightened", "maxLength"))[0] is Severity.ERROR


def test_profile_entry_does_not_raise_a_harmless_finding(tmp_path: Path) -> None:
    """A policy's error applies where a change breaks; a field added under pruning
    (harmless) stays info, and ignore still drops it."""
    path = _write(tmp_path, "p.toml", '[rules]\n"field-added" = "error"\n')
    f = _finding("field-added")
    assert load_profile(path).decide(f, breaking=False, default=Severity.INFO)[0] \
        is Severity.INFO
    off = _write(tmp_path, "q.toml", '[rules]\n"field-added" = "ignore"\n')
    assert load_profile(off).decide(f, breaking=False, default=Severity.INFO)[0] \
        is Severity.OFF


@pytest.mark.parametrize(("name", "text", "pointer", "hint"), [
    ("p.toml", '[rules]\n"enum-value-add" = "warn"\n', "$.rules.enum-value-add",
     "did you mean 'enum-value-added'?"),
    ("p.yaml", "rules:\n  field-added: sometimes\n", "$.rules.field-added",
     "error, warn, ignore"),
    ("p.yaml", "rules:\n  field-added: info\n", "$.rules.field-added", "use warn"),
    ("p.toml", 'extends = "gateway"\n', "$.extends", "did you mean 'gateway-api'?"),
    ("p.toml", '[rule]\n"field-added" = "warn"\n', "$.rule", "did you mean 'rules'?"),
])
def test_bad_policy_files_name_file_key_and_fix(tmp_path: Path, name: str, text: str,
                                                pointer: str, hint: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(SchemaLoadError) as info:
        load_profile(path)
    message = str(info.value)
    assert message.startswith(f"{path} at {pointer}:"), message
    assert hint in message


# -- the command line ---------------------------------------------------------------------


def test_cli_warn_exits_0_error_exits_1_ignored_are_counted(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.json", _schema())
    new = _write(tmp_path, "new.json", _schema(maximum=5, enum=("a", "b", "c")))
    pol = _write(tmp_path, "p.toml", '[rules]\n"bound-tightened" = "warn"\n'
                 '"enum-value-added" = "ignore"\n')
    assert main(["diff", old, new, "--no-dynamic"]) == 1
    capsys.readouterr()
    assert main(["diff", old, new, "--no-dynamic", "--policy", pol]) == 0
    out = capsys.readouterr().out
    assert f"policy: {pol}:2: \"bound-tightened\" = \"warn\"" in out
    assert "enum-value-added" not in out and "1 turned off by the policy" in out
    assert main(["diff", old, new, "--no-dynamic", "--policy", pol, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["policy"], doc["turned_off"], doc["exit_code"]) == (pol, 1, 0)
    assert {f["rule"]: (f["severity"], f["policy"].split(":")[1]) for f in doc["findings"]} \
        == {"bound-tightened": ("warning", "2"), "enum-value-added": ("off", "3")}
    assert main(["diff", old, new, "--no-dynamic", "--policy", pol, "--format", "sarif"]) == 0
    [run] = json.loads(capsys.readouterr().out)["runs"]
    levels = {r["ruleId"]: (r["level"], r["properties"]["policy"]) for r in run["results"]}
    assert levels["bound-tightened"][0] == "warning"
    assert levels["enum-value-added"][0] == "none"
    assert levels["enum-value-added"][1].startswith(f"{pol}:3:")


def test_cli_unknown_profile_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.json", _schema())
    assert main(["diff", old, old, "--policy", "gatewy-api"]) == 2
    err = capsys.readouterr().err
    assert "neither a built-in profile nor a file" in err and "'gateway-api'" in err


def test_external_secrets_new_provider_passes_under_gateway_api(corpus_dir: Path) -> None:
    """A new optional provider under SecretStore's ``minProperties: 1, maxProperties: 1``
    provider object (v0.14.0 -> v0.15.0) is a witnessed response break; a project
    that allows new fields lets it pass with a warning naming the line that allows it."""
    crd = corpus_dir / "crd-releases" / "external-secrets" / "external-secrets.io_secretstores"
    old, new = f"{crd / 'v0.14.0.yaml'}@v1beta1", f"{crd / 'v0.15.0.yaml'}@v1beta1"
    strict = diff(old, new, dynamic=False, policy=resolve_policy("kubernetes-strict"))
    k8s = diff(old, new, dynamic=False)
    gw = diff(old, new, dynamic=False, policy=resolve_policy("gateway-api"))
    added = {f.path: f for f in gw.findings if f.rule == "field-added" and f.breaking}
    assert set(added) == {"spec.provider.github", "spec.provider.cloudrusm"}
    assert {f.severity for f in strict.findings if f.rule == "field-added" and f.breaking} \
        == {Severity.ERROR}
    # old readers prune the new field and find the object too small: a loosening, which
    # the default profile lets pass with a warning
    assert {(f.severity, f.impact) for f in k8s.findings
            if f.rule == "field-added" and f.breaking} == {(Severity.WARNING, Impact.READS)}
    assert all(f.severity is Severity.WARNING and "New experimental API fields" in f.policy
               for f in added.values())
    # a changed default is still a break under Gateway API's policy
    assert [f.rule for f in gw.breaking] == ["default-changed"]


def test_ignore_file_severity_names_its_line(tmp_path: Path) -> None:
    from compatfuzz.compat import load_policy

    path = _write(tmp_path, "ignore.yaml", "ignore: []\nseverity:\n  # why\n"
                  "  bound-tightened: warning\n")
    sev, source = _decide(load_policy(path), _finding("bound-tightened", "maximum"))
    assert (sev, source) == (Severity.WARNING, f"{path}:4: bound-tightened: warning")


def test_severity_flag_wins_over_the_profile_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old.json", _schema())
    new = _write(tmp_path, "new.json", _schema(enum=("a", "b", "c")))
    assert main(["diff", old, new, "--no-dynamic", "--policy", "gateway-api", "--severity",
                 "enum-value-added=error", "--format", "json"]) == 1
    [f] = json.loads(capsys.readouterr().out)["findings"]
    assert (f["severity"], f["policy"]) == ("error", "--severity enum-value-added=error")


# -- [diff] in compatfuzz.toml: the policy written once -----------------------------------


def _pair(tmp_path: Path) -> tuple[str, str]:
    return (_write(tmp_path, "old.json", _schema()),
            _write(tmp_path, "new.json", _schema(enum=("a", "b", "c"))))


def _json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    code = main(["diff", *argv, "--no-witness", "--format", "json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if code != 2 else None, err


@pytest.mark.parametrize("name, table", [("compatfuzz.toml", "diff"),
                                         ("pyproject.toml", "tool.compatfuzz.diff")])
def test_the_configs_diff_table_sets_the_policy_found_from_a_subfolder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        name: str, table: str) -> None:
    old, new = _pair(tmp_path)
    (tmp_path / name).write_text(f'[{table}]\npolicy = "gateway-api"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    code, report, err = _json_run([old, new], capsys)
    assert (code, report["policy"]) == (0, "gateway-api")
    assert f"diff: policy from ../{name} [{table}]\n" in err
    # what the command line gives is not the config's: the note names only the rest
    code, _, err = _json_run([old, new, "--policy", "kubernetes-strict"], capsys)
    assert (code, err) == (1, "")
    # the command line wins over the config, and --config none reads none
    assert _json_run([old, new, "--policy", "kubernetes-strict"], capsys)[:2][0] == 1
    code, report, err = _json_run([old, new, "--config", "none"], capsys)
    assert (code, report["policy"], err) == (0, "kubernetes", "")


def test_config_paths_are_relative_to_the_config_and_an_ignore_file_applies(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _pair(tmp_path)
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "crdify.yaml").write_text(
        "validations:\n- name: enum\n  enforcement: Error\n  configuration:\n"
        "    additionPolicy: Allow\n")
    (tmp_path / "ci" / "compatfuzz.toml").write_text(
        '[diff]\npolicy = "crdify:crdify.yaml"\n')
    monkeypatch.chdir(tmp_path)
    code, report, _ = _json_run([old, new, "--config", "ci/compatfuzz.toml"], capsys)
    [f] = [f for f in report["findings"] if f["rule"] == "enum-value-added"]
    assert (code, f["severity"]) == (0, "warning")
    assert "crdify.yaml:5: additionPolicy: Allow" in f["policy"]
    (tmp_path / "ci" / "ignore.yaml").write_text(
        "ignore:\n- rule: enum-value-added\n  path: spec.mode\n  reason: reviewed\n")
    (tmp_path / "ci" / "compatfuzz.toml").write_text('[diff]\nignore = "ignore.yaml"\n')
    code, report, _ = _json_run([old, new, "--config", "ci/compatfuzz.toml"], capsys)
    [f] = [f for f in report["findings"] if f["rule"] == "enum-value-added"]
    assert (code, f["ignored"]) == (0, True)


@pytest.mark.parametrize("body, pointer, fix", [
    ('[diff]\npolicie = "gateway-api"\n', "$.diff.policie", "did you mean 'policy'?"),
    ('[diff]\npolicy = 3\n', "$.diff.policy", "[diff]\n  policy ="),
    ('diff = "gateway-api"\n', "$.diff", "[diff]\n  policy ="),
    ('[diff]\npolicy = "gatway-api"\n', "$.diff.policy", "did you mean 'gateway-api'?"),
    ('[diff]\nignore = "missing.yaml"\n', "$.diff.ignore", "relative to the config's"),
])
def test_a_bad_diff_table_names_the_config_the_key_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        *, body: str, pointer: str, fix: str) -> None:
    old, new = _pair(tmp_path)
    (tmp_path / "compatfuzz.toml").write_text(body)
    monkeypatch.chdir(tmp_path)
    code, _, err = _json_run([old, new], capsys)
    assert code == 2
    assert f"compatfuzz.toml at {pointer}:" in err, err
    assert fix in err and "Traceback" not in err


def test_fuzz_accepts_a_config_with_a_diff_table(tmp_path: Path) -> None:
    from compatfuzz.roundtrip import load_config

    crd = Path(__file__).parents[2] / "examples" / "frobber"
    (tmp_path / "compatfuzz.toml").write_text(
        (crd / "compatfuzz.toml").read_text() + '\n[diff]\npolicy = "gateway-api"\n')
    for f in crd.iterdir():
        if f.is_file() and f.name != "compatfuzz.toml":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    assert load_config(tmp_path / "compatfuzz.toml")


def test_gateway_api_warns_on_a_removed_cel_rule_but_fails_an_added_one() -> None:
    def with_rules(*rules: str) -> dict[str, Any]:
        schema = _schema()
        schema["properties"]["spec"]["x-kubernetes-validations"] = [
            {"rule": r} for r in rules]
        return schema

    policy = resolve_policy("gateway-api")
    removed = diff(with_rules("self.name != 'x'"), with_rules(), policy=policy, dynamic=False)
    [f] = [f for f in removed.findings if f.rule == "validations-changed"]
    assert (f.severity, removed.exit_code) == (Severity.WARNING, 0)
    assert "Loosened validation" in f.policy
    for new in (with_rules("self.name != 'x'", "self.name != 'y'"), with_rules("self.name != 'y'")):
        added = diff(with_rules("self.name != 'x'"), new, policy=policy, dynamic=False)
        [f] = [f for f in added.findings if f.rule == "validations-changed"]
        assert (f.severity, added.exit_code) == (Severity.ERROR, 1), new
