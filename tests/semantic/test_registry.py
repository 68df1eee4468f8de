"""Registering comparators and canonicalisers: selection, precedence, validation, caches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import InvalidArgument
from compatfuzz.semantic import (
    PathGlob,
    Registration,
    canonical_go_duration,
    canonicalise,
    diff,
    equal,
    register_canonicaliser,
    register_comparator,
    unregister,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {"Host": {"type": "string", "format": "hostname"}},
    "properties": {
        "host": {"$ref": "#/$defs/Host"},
        "alias": {"type": "string", "format": "hostname", "x-case": "insensitive"},
        "spec": {"type": "object", "properties": {
            "timeout": {"type": "string"},
            "items": {"type": "array", "x-kubernetes-list-type": "set",
                      "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "hosts": {"type": "array", "items": {"$ref": "#/$defs/Host"}},
        }},
    },
}


def lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else NotImplemented


def same_length(a: Any, b: Any) -> bool:
    return len(a or "") == len(b or "")


def test_format_selector_and_context_manager() -> None:
    a, b = {"alias": "Example.COM"}, {"alias": "example.com"}
    assert not equal(a, b, schema=SCHEMA)
    with register_canonicaliser(lower, format="hostname"):
        assert equal(a, b, schema=SCHEMA)  # compiled tree rebuilt after registering
        assert canonicalise(a, schema=SCHEMA) == {"alias": "example.com"}
    assert not equal(a, b, schema=SCHEMA)  # and again after leaving the block


def test_definition_selector_reaches_every_ref() -> None:
    a = {"host": "A", "spec": {"hosts": ["X", "y"]}}
    b = {"host": "a", "spec": {"hosts": ["x", "Y"]}}
    with register_canonicaliser(lower, definition="Host"):
        assert equal(a, b, schema=SCHEMA)
        assert not equal({"alias": "A"}, {"alias": "a"}, schema=SCHEMA)


def test_predicate_selector() -> None:
    with register_canonicaliser(lower, predicate=lambda node: node.get("x-case") == "insensitive"):
        assert equal({"alias": "A"}, {"alias": "a"}, schema=SCHEMA)
        assert not equal({"host": "A"}, {"host": "a"}, schema=SCHEMA)


@pytest.mark.parametrize(("glob", "a", "b"), [
    ("spec.timeout", {"spec": {"timeout": "90m"}}, {"spec": {"timeout": "1h30m"}}),
    ("**.timeout", {"spec": {"timeout": "90m"}}, {"spec": {"timeout": "1h30m"}}),
    ("spec.*", {"spec": {"timeout": "90m"}}, {"spec": {"timeout": "1h30m"}}),
    ("spec.labels.ttl", {"spec": {"labels": {"ttl": "60s"}}}, {"spec": {"labels": {"ttl": "1m"}}}),
    ("spec.labels[a.b/ttl]", {"spec": {"labels": {"a.b/ttl": "60s"}}},
     {"spec": {"labels": {"a.b/ttl": "1m"}}}),
    ("spec.hosts[*]", {"spec": {"hosts": ["60s"]}}, {"spec": {"hosts": ["1m"]}}),
    ("extra.deep[*].t", {"extra": {"deep": [{"t": "60s"}]}}, {"extra": {"deep": [{"t": "1m"}]}}),
])
def test_path_globs(glob: str, a: Any, b: Any) -> None:
    assert not equal(a, b, schema=SCHEMA)
    with register_canonicaliser(canonical_go_duration, path=glob):
        assert equal(a, b, schema=SCHEMA)
        assert equal(a, b)  # also without a schema
    assert not equal(a, b, schema=SCHEMA)


def test_path_glob_does_not_leak_to_siblings() -> None:
    with register_canonicaliser(canonical_go_duration, path="spec.labels.ttl"):
        assert not equal({"spec": {"labels": {"other": "60s"}}},
                         {"spec": {"labels": {"other": "1m"}}}, schema=SCHEMA)
        assert not equal({"spec": {"timeout": "60s"}}, {"spec": {"timeout": "1m"}}, schema=SCHEMA)


def test_go_durations_option_is_scoped_to_the_call() -> None:
    a, b = {"spec": {"timeout": "90m"}}, {"spec": {"timeout": "1h30m"}}
    assert equal(a, b, schema=SCHEMA, go_durations=["spec.timeout"])
    assert not equal(a, b, schema=SCHEMA)


def test_precedence_path_over_predicate_over_definition_over_format() -> None:
    calls: list[str] = []

    def tagged(tag: str) -> Any:
        def canon(value: Any) -> Any:
            calls.append(tag)
            return value

        return canon

    with register_canonicaliser(tagged("format"), format="hostname"), \
            register_canonicaliser(tagged("definition"), definition="Host"), \
            register_canonicaliser(tagged("predicate"), predicate=lambda n: "format" in n), \
            register_canonicaliser(tagged("path"), path="host"):
        equal({"host": "a"}, {"host": "b"}, schema=SCHEMA)
        assert set(calls) == {"path"}
        calls.clear()
        equal({"alias": "a"}, {"alias": "b"}, schema=SCHEMA)
        assert set(calls) == {"predicate"}


def test_newest_registration_wins_and_unregister_restores() -> None:
    first = register_canonicaliser(lambda v: "same", format="hostname")
    try:
        assert equal({"alias": "a"}, {"alias": "b"}, schema=SCHEMA)
        second = register_canonicaliser(lambda v: v, format="hostname")
        assert not equal({"alias": "a"}, {"alias": "b"}, schema=SCHEMA)
        unregister(second)
        assert equal({"alias": "a"}, {"alias": "b"}, schema=SCHEMA)
        second.unregister()  # idempotent
    finally:
        first.unregister()


def test_comparator_is_opaque_but_works_in_sets_and_diffs() -> None:
    with register_comparator(same_length, path="spec.items[*]"):
        a = {"spec": {"items": ["aa", "b"]}}
        assert equal(a, {"spec": {"items": ["c", "dd"]}}, schema=SCHEMA)
        changes = diff(a, {"spec": {"items": ["ccc", "d"]}}, schema=SCHEMA)
        # set elements are named by value: "aa" (a[0]) and "ccc" (b[0]) share no position
        assert [(c.path, str(c.kind)) for c in changes] == [
            ('spec.items[="aa"]', "lost"), ('spec.items[="ccc"]', "added")]
        assert canonicalise(a, schema=SCHEMA) == a  # no canonical form: left alone


def test_comparator_not_implemented_falls_back() -> None:
    def only_ints(a: Any, b: Any) -> Any:
        return a % 10 == b % 10 if isinstance(a, int) and isinstance(b, int) else NotImplemented

    with register_comparator(only_ints, path="n"):
        assert equal({"n": 11}, {"n": 1})
        assert equal({"n": "x"}, {"n": "x"})
        assert not equal({"n": "x"}, {"n": "y"})


def test_comparator_explains_container_differences_with_deepdiff() -> None:
    with register_comparator(lambda a, b: a == b, path="blob"):
        (change,) = diff({"blob": {"a": 1, "b": [1, 2]}}, {"blob": {"a": 2, "b": [1, 2]}})
    assert change.path == "blob"
    assert change.detail.startswith("deepdiff: values_changed at root['a']")


# --- validation: one specific error per kind of mistake -------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "exactly one of format=, definition=, path= or predicate="),
    ({"format": "a", "path": "b"}, "exactly one of"),
    ({"format": ""}, "Expected a non-empty string but got format=''"),
    ({"definition": 3}, "Expected a non-empty string but got definition=3"),
    ({"definition": "#/$defs/Host"}, "pass the definition name only, e.g. definition='Host'"),
    ({"path": ""}, "is empty"),
    ({"path": "spec..x"}, "empty segment"),
    ({"path": "spec.x."}, "ends with a dot"),
    ({"path": "spec.containers[0]"}, "write [*]"),
    ({"path": 5}, "Expected a field-path glob string but got path=5"),
    ({"predicate": "x"}, "Expected a callable predicate(schema_node) -> bool"),
    ({"predicate": lambda a, b: True}, "must accept one argument"),
])
def test_bad_selectors_are_rejected(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        register_canonicaliser(lower, **kwargs)
    assert message in str(info.value)


def test_bad_functions_are_rejected() -> None:
    with pytest.raises(InvalidArgument, match="Expected a callable comparator"):
        register_comparator("nope", path="x")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="cannot be called with 2 positional arguments"):
        register_comparator(lower, path="x")
    with pytest.raises(InvalidArgument, match="cannot be called with 1 positional argument"):
        register_canonicaliser(same_length, path="x")
    with pytest.raises(InvalidArgument, match="pass the function itself"), \
            register_canonicaliser(lower, path="x") as reg:
        register_canonicaliser(reg, path="y")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="Expected the Registration"):
        unregister(lower)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"Expected a compatfuzz\.schema\.Schema"):
        equal(1, 1, schema=[1])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"write go_durations=\['spec.x'\]"):
        equal(1, 1, go_durations="spec.x")


def test_registration_repr_and_type() -> None:
    with register_canonicaliser(lower, path="a.b") as reg:
        assert isinstance(reg, Registration)
        assert repr(reg) == "<canonicaliser lower path='a.b'>"


@given(st.lists(st.sampled_from(["spec", "*", "**", "[*]", "a-b", "[x.y/z]"]), min_size=1,
                max_size=5))
def test_glob_parse_round_trips_tokens(parts: list[str]) -> None:
    text = ""
    for part in parts:
        text += part if part.startswith("[") and text else ("." if text else "") + part
    if text.startswith("["):
        text = "x" + text
        parts = ["x", *parts]
    tokens = tuple(p[1:-1] if p.startswith("[") and p != "[*]" else p for p in parts)
    assert PathGlob.parse(text).tokens == tokens


def test_canonicaliser_over_a_container_with_an_opaque_comparator_inside() -> None:
    def sorted_or_not(value: Any) -> Any:
        return sorted(value) if isinstance(value, list) and len(value) > 1 else NotImplemented

    with register_canonicaliser(sorted_or_not, path="spec.hosts"), \
            register_comparator(same_length, path="spec.hosts[*]"):
        assert equal({"spec": {"hosts": ["b", "a"]}}, {"spec": {"hosts": ["a", "b"]}},
                     schema=SCHEMA)
        assert equal({"spec": {"hosts": ["ab"]}}, {"spec": {"hosts": ["cd"]}}, schema=SCHEMA)
        assert not equal({"spec": {"hosts": ["ab"]}}, {"spec": {"hosts": ["a", "b"]}},
                         schema=SCHEMA)
        assert equal({"spec": {"hosts": []}}, {"spec": {}}, schema=SCHEMA)
        assert diff({"spec": {"hosts": ["ab"]}}, {"spec": {"hosts": ["c"]}},
                    schema=SCHEMA).paths == ["spec.hosts[0]"]
        assert diff({"spec": {"hosts": ["b", "a"]}}, {"spec": {"hosts": ["c", "a"]}},
                    schema=SCHEMA).paths == ["spec.hosts"]


# --- the root schema has a definition name too ------------------------------------------

@pytest.mark.parametrize("name", ["Deployment", "io.k8s.api.apps.v1.Deployment"])
def test_definition_selector_matches_the_root_schema(name: str) -> None:
    """load_kubernetes puts the Deployment at the root, reached through no $ref; the
    selector used to match only definitions reached through a $ref, so never the root."""
    from compatfuzz.schema import load_kubernetes

    schema = load_kubernetes("apps/v1", "Deployment")
    a, b = {"spec": {"replicas": 1}}, {"spec": {"replicas": 2}}
    assert not equal(a, b, schema=schema)
    with register_comparator(lambda x, y: True, definition=name):
        assert equal(a, b, schema=schema)
    with register_comparator(lambda x, y: True, definition="DeploymentSpec"):
        assert equal(a, b, schema=schema)
    with register_comparator(lambda x, y: True, definition="Spec"):  # not a dotted suffix
        assert not equal(a, b, schema=schema)


# --- globs in other path syntaxes are rejected with the glob to write --------------------

@pytest.mark.parametrize(("glob", "problem", "fix"), [
    ("/spec/replicas", "is a JSON Pointer", "path='spec.replicas'"),
    ("#/spec/replicas", "is a JSON Pointer", "path='spec.replicas'"),
    ("/metadata/labels/app.kubernetes.io~1name", "JSON Pointer",
     "path='metadata.labels[app.kubernetes.io/name]'"),
    ("/spec/containers/0/image", "JSON Pointer", "path='spec.containers[*].image'"),
    ("$.spec.replicas", "is a JSONPath expression", "path='spec.replicas'"),
    ("$['spec']['replicas']", "is a JSONPath expression", "path='spec.replicas'"),
    ("$..image", "JSONPath", "path='**.image'"),
    ("$.spec.containers[0].image", "JSONPath", "path='spec.containers[*].image'"),
    ("spec/replicas", "has a '/' in the name 'spec/replicas'", "path='spec.replicas'"),
    ("spec['replicas']", "quotes a name", "path='spec[replicas]'"),
    ("spec.containers[?(@.name=='a')].image", "JSONPath filter",
     "path='spec.containers[*].image'"),
    ('spec.template.spec.containers[name="app"].image', "selects a list-map item by its keys",
     "path='spec.template.spec.containers[*].image'"),
    ('spec.ports[containerPort=80,protocol="TCP"]', "list-map item", "path='spec.ports[*]'"),
    ("spec.cont*", "partial wildcard", None),
    ("spec.containers[0]", "selects list index [0]", "path='spec.containers[*]'"),
])
def test_globs_in_other_syntaxes_are_rejected_with_a_fix(glob: str, problem: str,
                                                         fix: str | None) -> None:
    """These were accepted and silently never matched anything."""
    with pytest.raises(InvalidArgument) as info:
        register_comparator(same_length, path=glob)
    message = str(info.value)
    assert f"path={glob!r}" in message
    assert problem in message
    if fix is not None:
        assert f"write {fix}" in message or f"so write [*]: {fix}" in message
        PathGlob.parse(fix[len("path='"):-1])  # the suggestion itself is a valid glob


@pytest.mark.parametrize(("glob", "tokens"), [
    ('metadata.annotations["a]b"]', ("metadata", "annotations", "a]b")),
    ('metadata.annotations[""]', ("metadata", "annotations", "")),
    ('labels["a=b"]', ("labels", "a=b")),
    ("metadata.labels[app.kubernetes.io/name]", ("metadata", "labels", "app.kubernetes.io/name")),
])
def test_quoted_keys_as_diff_paths_print_them_are_globs(glob: str, tokens: tuple[str, ...]) -> None:
    assert PathGlob.parse(glob).tokens == tokens
