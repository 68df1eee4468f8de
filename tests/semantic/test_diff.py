"""Diff paths and kinds for targeted mutations of a real apps/v1 Deployment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.errors import NotEquivalent
from compatfuzz.semantic import Change, ChangeKind, Diff, assert_equal, diff, equal
from tests.semantic.deployment import deployment, respelled

POD = "spec.template.spec"


@pytest.fixture(scope="module")
def schema() -> Any:
    schema_module = pytest.importorskip("compatfuzz.schema")
    if not hasattr(schema_module, "load_kubernetes"):
        pytest.skip("compatfuzz.schema.load_kubernetes is not available yet")
    return schema_module.load_kubernetes("apps/v1", "Deployment")


def _pod(d: dict[str, Any]) -> dict[str, Any]:
    return d["spec"]["template"]["spec"]


def _container(d: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in _pod(d)["containers"] if c["name"] == name)


MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None], list[tuple[str, ChangeKind]]]] = [
    ("cpu limit", lambda d: _container(d, "app")["resources"]["limits"].update(cpu="1"),
     [(f'{POD}.containers[name="app"].resources.limits.cpu', ChangeKind.CHANGED)]),
    ("image", lambda d: _container(d, "sidecar").update(image="busybox:2"),
     [(f'{POD}.containers[name="sidecar"].image', ChangeKind.CHANGED)]),
    ("label removed", lambda d: d["metadata"]["labels"].pop("tier"),
     [("metadata.labels.tier", ChangeKind.LOST)]),
    ("annotation added", lambda d: d["metadata"]["annotations"].update({"example.com/o": "x"}),
     [("metadata.annotations[example.com/o]", ChangeKind.ADDED)]),
    ("replicas as string", lambda d: d["spec"].update(replicas="3"),
     [("spec.replicas", ChangeKind.TYPE_CHANGED)]),
    ("port renumbered",
     lambda d: _container(d, "app")["ports"][1].update(containerPort=8443),
     [(f'{POD}.containers[name="app"].ports[containerPort=443,protocol="TCP"]',
       ChangeKind.LOST),
      (f'{POD}.containers[name="app"].ports[containerPort=8443,protocol="TCP"]',
       ChangeKind.ADDED)]),
    ("tolerations emptied", lambda d: _pod(d).update(tolerations=[]),
     [(f"{POD}.tolerations", ChangeKind.LOST)]),
    ("command argument", lambda d: _container(d, "sidecar")["command"].__setitem__(2, "true"),
     [(f'{POD}.containers[name="sidecar"].command[2]', ChangeKind.CHANGED)]),
    ("condition time", lambda d: d["status"]["conditions"][0].update(
        lastTransitionTime="2024-05-01T10:02:00Z"),
     [('status.conditions[type="Available"].lastTransitionTime', ChangeKind.CHANGED)]),
    ("env var removed", lambda d: _container(d, "app")["env"].pop(0),
     [(f'{POD}.containers[name="app"].env[name="A"]', ChangeKind.LOST)]),
    ("security context set to zero struct", lambda d: _pod(d).update(securityContext={}),
     [(f"{POD}.securityContext", ChangeKind.ADDED)]),
    ("volume size", lambda d: _pod(d)["volumes"][0]["emptyDir"].update(sizeLimit="2Gi"),
     [(f'{POD}.volumes[name="data"].emptyDir.sizeLimit', ChangeKind.CHANGED)]),
    ("container added", lambda d: _pod(d)["containers"].append({"name": "x", "image": "y"}),
     [(f'{POD}.containers[name="x"]', ChangeKind.ADDED)]),
    ("probe port as string", lambda d: _container(d, "app")["livenessProbe"]["httpGet"].update(
        port="80"),
     [(f'{POD}.containers[name="app"].livenessProbe.httpGet.port', ChangeKind.TYPE_CHANGED)]),
]


@pytest.mark.parametrize(("mutate", "expected"), [(m, e) for _n, m, e in MUTATIONS],
                         ids=[n for n, _m, _e in MUTATIONS])
def test_targeted_mutation_is_reported_at_its_path(
        schema: Any, mutate: Callable[[dict[str, Any]], None],
        expected: list[tuple[str, ChangeKind]]) -> None:
    old = deployment()
    new = deployment()
    mutate(new)
    changes = diff(old, new, schema=schema)
    assert [(c.path, c.kind) for c in changes] == expected
    assert not equal(old, new, schema=schema)
    # ... and it is still found when the new object is spelled differently
    assert [(c.path, c.kind) for c in diff(old, respelled(new), schema=schema)] == expected


def test_equal_but_differently_spelled_deployment(schema: Any) -> None:
    old = deployment()
    new = respelled(old)
    assert new != old
    assert equal(old, new, schema=schema)
    assert diff(old, new, schema=schema) == Diff()
    assert str(diff(old, new, schema=schema)) == "no differences"


def test_without_schema_the_spelling_differences_show(schema: Any) -> None:
    old = deployment()
    paths = diff(old, respelled(old)).paths
    assert "metadata.creationTimestamp" in paths
    assert f"{POD}.containers[0].name" in paths


def test_change_str_reads_like_a_review_comment(schema: Any) -> None:
    old = deployment()
    new = deployment()
    _container(new, "app")["resources"]["limits"]["memory"] = "1G"
    (change,) = diff(old, new, schema=schema)
    assert str(change) == (
        f'{POD}.containers[name="app"].resources.limits.memory: "1Gi" -> "1G"'
        "  [quantity values 1073741824 != 1000000000]"
    )
    assert change == Change(f'{POD}.containers[name="app"].resources.limits.memory',
                            ChangeKind.CHANGED, "1Gi", "1G",
                            "quantity values 1073741824 != 1000000000")


def test_assert_equal_raises_not_equivalent_with_the_diff(schema: Any) -> None:
    old = deployment()
    new = deployment()
    new["spec"]["replicas"] = 4
    assert_equal(old, respelled(old), schema=schema)
    with pytest.raises(NotEquivalent) as info:
        assert_equal(old, new, schema=schema, message="round trip v1 -> v2 -> v1")
    assert info.value.diff.paths == ["spec.replicas"]
    assert "round trip v1 -> v2 -> v1" in str(info.value)
    assert "spec.replicas: 3 -> 4" in str(info.value)


def test_empty_struct_is_absent_option(schema: Any) -> None:
    old = deployment()
    new = deployment()
    _container(new, "sidecar")["securityContext"] = {}
    assert not equal(old, new, schema=schema)
    assert equal(old, new, schema=schema, empty_struct_is_absent=True)


@given(st.sampled_from(["metadata", "spec", "status"]), st.integers(0, 10**6))
def test_any_injected_field_value_is_found_at_its_path(schema: Any, top: str, value: int) -> None:
    old = deployment()
    new = deployment()
    new[top]["x-extra"] = value
    assert diff(old, new, schema=schema).paths == [f"{top}.x-extra"]


# --- paths that name what they mean ------------------------------------------------------

@pytest.mark.parametrize(("key", "path"), [
    ("a]b", 'metadata.annotations["a]b"]'),
    ("", 'metadata.annotations[""]'),
    (" padded", 'metadata.annotations[" padded"]'),
    ('say "hi"', 'metadata.annotations["say \\"hi\\""]'),
    ("example.com/o", "metadata.annotations[example.com/o]"),
])
def test_awkward_map_keys_get_unambiguous_paths_that_work_as_globs(
        schema: Any, key: str, path: str) -> None:
    """A key holding "]" used to print as metadata.annotations[a]b], the empty key as
    metadata.annotations[] (invisible); both now print as JSON strings."""
    from compatfuzz.semantic import register_comparator

    old, new = deployment(), deployment()
    old["metadata"]["annotations"][key] = "1"
    new["metadata"]["annotations"][key] = "2"
    assert diff(old, new, schema=schema).paths == [path]
    with register_comparator(lambda a, b: True, path=path):  # the path reads back as a glob
        assert equal(old, new, schema=schema)


def test_set_elements_are_named_by_value_not_by_a_position_from_either_list(
        schema: Any) -> None:
    """finalizers is a list-type set: "a" was old[1] and "c" is new[1], which used to be
    reported as finalizers[1] lost and finalizers[1] added, like one position changing."""
    old, new = deployment(), deployment()
    old["metadata"]["finalizers"] = ["x", "a"]
    new["metadata"]["finalizers"] = ["x", "c"]
    changes = diff(old, new, schema=schema)
    assert [(c.path, c.kind, c.old, c.new) for c in changes] == [
        ('metadata.finalizers[="a"]', ChangeKind.LOST, "a", None),
        ('metadata.finalizers[="c"]', ChangeKind.ADDED, None, "c"),
    ]
    new["metadata"]["finalizers"] = ["a", "x"]
    assert not diff(old, new, schema=schema)


@pytest.mark.parametrize(("before", "after", "kind", "detail"), [
    ("1", 2, ChangeKind.CHANGED, "quantity values 1 != 2"),
    (1, "2", ChangeKind.CHANGED, "quantity values 1 != 2"),
    ("1", 1.5, ChangeKind.CHANGED, "quantity values 1 != 1.5"),
    ("1", "x", ChangeKind.CHANGED, ""),  # "x" is no quantity: no quantity detail
    (1, "x", ChangeKind.TYPE_CHANGED, ""),  # ... so 1 -> "x" is a real type change
    ("1", True, ChangeKind.TYPE_CHANGED, ""),
])
def test_quantity_spelled_as_a_number_changes_value_not_type(
        schema: Any, before: Any, after: Any, kind: ChangeKind, detail: str) -> None:
    """"1" -> 2 was reported as an unexplained type-changed; both are quantities."""
    old, new = deployment(), deployment()
    _container(old, "app")["resources"]["limits"]["cpu"] = before
    _container(new, "app")["resources"]["limits"]["cpu"] = after
    changes = diff(old, new, schema=schema)
    assert [(c.kind, c.detail) for c in changes] == [(kind, detail)]
    _container(new, "app")["resources"]["limits"]["cpu"] = 1 if before == "1" else "1"
    assert not diff(old, new, schema=schema)
