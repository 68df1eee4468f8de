"""Load schemas from every source compatfuzz supports into one normalised model.

Every loader returns :class:`Schema`: a self-contained JSON Schema 2020-12 document with
local ``$ref`` only and ``x-kubernetes-*`` extensions kept, so the other parts of
compatfuzz deal with one dialect.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.schema._bundle import bundle
from compatfuzz.schema._formats import check_format
from compatfuzz.schema._kubernetes import kubernetes_kinds, kubernetes_releases, load_kubernetes
from compatfuzz.schema._lint import LintFinding, lint_structural
from compatfuzz.schema._load import load_crds, load_schema
from compatfuzz.schema._model import CRD, CRDVersion, Schema, resolve_pointer
from compatfuzz.schema._normalize import normalize
from compatfuzz.schema._read import read_documents
from compatfuzz.schema._wellknown import WellKnown, classify, definition_kind

__all__ = [
    "CRD",
    "CRDVersion",
    "LintFinding",
    "Schema",
    "WellKnown",
    "bundle",
    "check_format",
    "classify",
    "definition_kind",
    "kubernetes_kinds",
    "kubernetes_releases",
    "lint_structural",
    "load_crds",
    "load_kubernetes",
    "load_schema",
    "normalize",
    "read_documents",
    "resolve_pointer",
]

_rehome(globals())
