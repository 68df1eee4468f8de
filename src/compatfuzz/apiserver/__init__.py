"""A model of the Kubernetes API server's handling of custom resources.

compatfuzz judges a round trip by what a real API server would do with the objects:
prune fields a version's structural schema does not declare, drop non-nullable nulls,
decode ObjectMeta, apply structural defaults, validate (OpenAPI with kube-openapi
formats, and CEL rules), and enforce the rules on a conversion response. Each function
mirrors one upstream file of apiextensions-apiserver, cited in its module, and is checked
against the compiled upstream code by the suite in ``conformance/``.

The part depends only on ``compatfuzz.schema`` (and the CEL evaluator of
``compatfuzz.strategies``); ``compatfuzz.roundtrip`` calls :class:`APIServer` for every
property.
"""

from __future__ import annotations

from compatfuzz._public import rehome as _rehome
from compatfuzz.apiserver._conversion import check_response
from compatfuzz.apiserver._crd_problem import CRDProblem, field_pointer
from compatfuzz.apiserver._crd_validation import validate_crd
from compatfuzz.apiserver._default import default
from compatfuzz.apiserver._objectmeta import Rejected
from compatfuzz.apiserver._pipeline import APIServer, Step, decode
from compatfuzz.apiserver._structural import coerce, prune, prune_nulls, structural
from compatfuzz.apiserver._validate import validation_errors

__all__ = [
    "APIServer",
    "CRDProblem",
    "Rejected",
    "Step",
    "check_response",
    "coerce",
    "decode",
    "default",
    "field_pointer",
    "prune",
    "prune_nulls",
    "structural",
    "validate_crd",
    "validation_errors",
]

_rehome(globals())
