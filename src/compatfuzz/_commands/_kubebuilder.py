"""``compatfuzz init DIR`` for a kubebuilder project: its PROJECT file says which kinds
are served in which versions and which Go package holds each; the CRDs are in
``config/crd/bases`` (controller-gen's ``output:crd:artifacts:config``).

The PROJECT file is kubebuilder's ``pkg/config/v3`` (``resources[]``: ``group``,
``domain``, ``kind``, ``version``, ``path`` the Go import path, ``webhooks.conversion``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compatfuzz.errors import SchemaLoadError

__all__ = ["KindPlan", "is_kubebuilder", "kubebuilder_apis"]

CRD_FOLDER = Path("config") / "crd" / "bases"


@dataclass
class KindPlan:
    """One kind of the project, with its versions' packages and its CRD file."""

    group: str  # the API group, with the domain
    kind: str
    #: version -> its Go package as the config names it (``./api/v1`` in the project)
    packages: dict[str, str] = field(default_factory=dict)
    crd: Path | None = None


def is_kubebuilder(path: Path) -> bool:
    """Whether ``path`` is a kubebuilder project folder (or its PROJECT file)."""
    project = path / "PROJECT" if path.is_dir() else path
    return project.name == "PROJECT" and project.is_file()


def _project(root: Path) -> dict[str, Any]:
    from compatfuzz.schema import read_documents

    source = root / "PROJECT"
    docs = read_documents(source)
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise SchemaLoadError("not a kubebuilder PROJECT file (one YAML mapping)",
                              source=str(source), hint="run kubebuilder's init in this folder")
    doc: dict[str, Any] = docs[0]
    if not isinstance(doc.get("resources"), list) or not doc["resources"]:
        raise SchemaLoadError("the PROJECT file lists no resources", source=str(source),
                              pointer="/resources",
                              hint="create the API versions first: kubebuilder create api "
                                   "--group G --version V --kind K")
    return doc


def kubebuilder_apis(root: Path) -> list[KindPlan]:
    """The project's kinds served in two or more versions, each with its CRD file.

    Raises:
        SchemaLoadError: no PROJECT file, no resources, a resource without its Go
            package, or no CRD of a kind in ``config/crd/bases`` (with the make target
            that writes it).
    """
    from compatfuzz.schema import read_documents

    root = root.parent if root.name == "PROJECT" else root
    doc = _project(root)
    domain = str(doc.get("domain") or "")
    repo = str(doc.get("repo") or "")
    plans: dict[tuple[str, str], KindPlan] = {}
    for i, res in enumerate(doc["resources"]):
        if not isinstance(res, dict) or not res.get("kind") or not res.get("version"):
            continue
        group = str(res.get("group") or "")
        full = ".".join(p for p in (group, str(res.get("domain") or domain)) if p)
        if not res.get("path"):
            raise SchemaLoadError(
                "this resource has no path (its Go package)", source=str(root / "PROJECT"),
                pointer=f"/resources/{i}",
                hint="an external or core type cannot be converted here; compatfuzz reads "
                     "the kinds your project defines")
        plan = plans.setdefault((full, str(res["kind"])), KindPlan(full, str(res["kind"])))
        plan.packages[str(res["version"])] = relative_package(str(res["path"]), repo)
    multi = [p for p in plans.values() if len(p.packages) >= 2]
    if not multi:
        raise SchemaLoadError(
            "no kind of this project is served in two versions; there is no conversion "
            "to test", source=str(root / "PROJECT"), pointer="/resources",
            hint="add a version: kubebuilder create api --group G --version V2 --kind K")
    crds = sorted((root / CRD_FOLDER).glob("*.yaml")) if (root / CRD_FOLDER).is_dir() else []
    for path in crds:
        for d in read_documents(path):
            if not isinstance(d, dict) or d.get("kind") != "CustomResourceDefinition":
                continue
            spec = d.get("spec") or {}
            key = (spec.get("group"), (spec.get("names") or {}).get("kind"))
            for plan in multi:
                if (plan.group, plan.kind) == key:
                    plan.crd = path
    for plan in multi:
        if plan.crd is None:
            raise SchemaLoadError(
                f"no CRD of {plan.kind}.{plan.group} in {CRD_FOLDER}", source=str(root),
                hint="generate it: make manifests (controller-gen crd "
                     "output:crd:artifacts:config=config/crd/bases)")
    return multi


def relative_package(path: str, repo: str) -> str:
    """``./api/v1`` for ``example.com/shipyard/api/v1`` in repo ``example.com/shipyard``."""
    if repo and (path == repo or path.startswith(repo + "/")):
        return "." + path[len(repo):]
    return path


def config_lines(root: Path, folder: Path, plans: list[KindPlan]) -> list[str]:
    """One ``[[api]]`` per kind, converting through the project's Go packages."""
    import json

    module = Path(os.path.relpath(root.resolve(), folder.resolve())).as_posix()
    lines: list[str] = []
    for plan in plans:
        crd = Path(os.path.relpath(plan.crd.resolve(), folder.resolve())).as_posix() \
            if plan.crd else ""
        packages = ", ".join(json.dumps(p) for p in plan.packages.values())
        lines += [
            "[[api]]",
            f"name = {json.dumps(plan.kind.lower() + 's')}",
            f"crd = {json.dumps(crd)}",
            f"# {plan.kind}.{plan.group}, versions {', '.join(plan.packages)}: converted by "
            "controller-runtime's webhook handler",
            f"go = {{ module = {json.dumps(module)}, packages = [{packages}] }}",
            "",
            "[api.semantic]",
            "# a Go struct field (status, a pod template's metadata) cannot tell `{}` from",
            "# none: json:\",omitempty\" writes {} for an empty one",
            "empty_struct_is_absent = true",
            "",
        ]
    return lines
