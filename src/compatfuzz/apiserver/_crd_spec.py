"""The API server's checks of a CRD's own fields (everything but the schemas).

Part of the port of k8s.io/apiextensions-apiserver v0.37.2
``pkg/apis/apiextensions/validation/validation.go`` behind
:func:`compatfuzz.apiserver.validate_crd` (``_crd_validation``): the DNS rules applied to
names (``ValidateCustomResourceDefinitionNames``, the subresources, printer columns and
selectable fields, the conversion webhook (k8s.io/apiserver ``pkg/util/webhook/
validation.go``), deprecation warnings and the API-approval annotation of the protected
groups (``pkg/apihelpers/helpers.go``). The DNS rules themselves are in ``_dns``.
"""

from __future__ import annotations

import unicodedata
import urllib.parse
from collections.abc import Mapping
from typing import Any

from compatfuzz.apiserver._crd_decode import _fail
from compatfuzz.apiserver._crd_problem import (
    DUPLICATE,
    TOO_MANY,
    CRDProblem,
    child,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    problem,
    required,
)
from compatfuzz.apiserver._crd_schema import valid_field_path
from compatfuzz.apiserver._dns import is_dns1035_label, is_dns1123_subdomain

__all__ = ["validate_names"]

_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64",
                   "password")
_APPROVAL = "api-approved.kubernetes.io"
_MAX_SELECTABLE_FIELDS = 8


def _go_len(text: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def _enum(path: str, value: str, accepted: tuple[str, ...]) -> list[CRDProblem]:
    if not value:
        return [required(path)]
    if value in accepted:
        return []
    return [not_supported(path, value, accepted)]


def _deprecation_warning(deprecated: bool, text: str | None) -> list[str]:
    if not deprecated and text is not None:
        return ["can only be set for deprecated versions"]
    if text is None:
        return []
    errs = []
    if _go_len(text) > 256:
        errs.append("must be <= 256 characters long")
    if not text:
        errs.append("must not be an empty string")
    offset = 0
    for ch in text:
        if not _go_is_print(ch):
            errs.append("must only contain printable UTF-8 characters; non-printable "
                        f"character found at index {offset}")
            break
        offset += _go_len(ch)
    return errs


def _go_is_print(ch: str) -> bool:
    """``unicode.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def validate_names(names: Mapping[str, Any], path: str) -> list[CRDProblem]:
    """``ValidateCustomResourceDefinitionNames``."""
    errs: list[CRDProblem] = []
    for name in ("plural", "singular"):
        value = names[name]
        if value and (dns := is_dns1035_label(value)):
            errs.append(invalid(child(path, name), value, ",".join(dns)))
    for name in ("kind", "listKind"):
        value = names[name]
        if value and (dns := is_dns1035_label(value.lower())):
            errs.append(invalid(child(path, name), value, "may have mixed case, but should "
                                "otherwise match: " + ",".join(dns)))
    for i, short in enumerate(names["shortNames"]):
        if dns := is_dns1035_label(short):
            errs.append(invalid(index(child(path, "shortNames"), i), short, ",".join(dns)))
    if names["kind"] and names["kind"] == names["listKind"]:
        errs.append(invalid(child(path, "listKind"), names["listKind"],
                            "kind and listKind may not be the same"))
    for i, category in enumerate(names["categories"]):
        if dns := is_dns1035_label(category):
            errs.append(invalid(index(child(path, "categories"), i), category,
                                ",".join(dns)))
    return errs


def _simple_json_path(s: str, path: str) -> list[CRDProblem]:
    if not s:
        return [invalid(path, s, "must not be empty")]
    if s[0] != ".":
        return [invalid(path, s, "must be a simple json path starting with .")]
    return []


def _subresource_errors(sub: Mapping[str, Any] | None, path: str) -> list[CRDProblem]:
    """``ValidateCustomResourceDefinitionSubresources``."""
    if sub is None or "scale" not in sub:
        return []
    scale = sub["scale"]
    errs: list[CRDProblem] = []
    for name, prefix, where in (("specReplicasPath", ".spec.", ".spec"),
                                ("statusReplicasPath", ".status.", ".status")):
        at = f"{path}.scale.{name}"
        value = scale[name]
        if not value:
            errs.append(required(at))
        elif bad := _simple_json_path(value, at):
            errs.extend(bad)
        elif not value.startswith(prefix):
            errs.append(invalid(at, value, f"should be a json path under {where}"))
    selector = scale["labelSelectorPath"]
    if selector:
        at = f"{path}.scale.labelSelectorPath"
        if bad := _simple_json_path(selector, at):
            errs.extend(bad)
        elif not selector.startswith((".spec.", ".status.")):
            errs.append(invalid(at, selector, "should be a json path under either .spec or "
                                              ".status"))
    return errs


def _column_errors(col: Mapping[str, Any], path: str) -> list[CRDProblem]:
    """``ValidateCustomResourceColumnDefinition``."""
    errs: list[CRDProblem] = []
    if not col["name"]:
        errs.append(required(child(path, "name")))
    types = "must be one of " + ",".join(_COLUMN_TYPES)
    if not col["type"]:
        errs.append(required(child(path, "type"), types))
    elif col["type"] not in _COLUMN_TYPES:
        errs.append(invalid(child(path, "type"), col["type"], types))
    if col["format"] and col["format"] not in _COLUMN_FORMATS:
        errs.append(invalid(child(path, "format"), col["format"],
                            "must be one of " + ",".join(_COLUMN_FORMATS)))
    if not col["jsonPath"]:
        errs.append(required(child(path, "JSONPath")))
    else:
        errs.extend(_simple_json_path(col["jsonPath"], child(path, "JSONPath")))
    return errs


def _selectable_errors(fields: list[dict[str, Any]], schema: Mapping[str, Any] | None,
                       path: str) -> list[CRDProblem]:
    """``ValidateCustomResourceSelectableFields``."""
    errs: list[CRDProblem] = []
    unique: set[str] = set()
    for i, entry in enumerate(fields):
        at = child(index(path, i), "jsonPath")
        json_path = entry["jsonPath"]
        if not json_path:
            errs.append(required(at))
            continue
        why = valid_field_path(json_path, schema, allow_array_notation=False)
        if why is not None:
            errs.append(invalid(at, json_path, f"is an invalid path: {why}"))
            continue
        steps = [s for s in json_path.split(".") if s]
        if steps and steps[0] == "metadata":
            errs.append(invalid(at, json_path, "must not point to fields in metadata"))
        found: Any = schema
        for s in steps:
            props = found.get("properties") if isinstance(found, dict) else None
            if props:
                found = props.get(s)
            elif isinstance(found, dict) and isinstance(found.get("additionalProperties"),
                                                           Mapping):
                found = found["additionalProperties"]
            else:
                found = None
        if not (isinstance(found, dict) and found.get("type") in ("string", "boolean",
                                                                       "integer")):
            errs.append(invalid(at, json_path, "must point to a field of type string, boolean "
                                "or integer. Enum string fields and strings with formats are "
                                "allowed."))
        canonical = ".".join(steps)
        if canonical in unique:
            errs.append(problem(DUPLICATE, at, json_path))
        unique.add(canonical)
    if len(unique) > _MAX_SELECTABLE_FIELDS:
        errs.append(problem(TOO_MANY, path, len(unique),
                            f"must have at most {_MAX_SELECTABLE_FIELDS} items"))
    return errs


def _conversion_errors(conversion: Mapping[str, Any]) -> list[CRDProblem]:
    """``validateCustomResourceConversion`` (recognized review versions required)."""
    path = "spec.conversion"
    errs = _enum(child(path, "strategy"), conversion["strategy"], ("None", "Webhook"))
    cc = conversion["clientConfig"]
    if conversion["strategy"] == "Webhook":
        if cc is None:
            errs.append(required(child(path, "webhookClientConfig"),
                                 "required when strategy is set to Webhook"))
        else:
            at = child(path, "webhookClientConfig")
            if (cc["url"] is None) == (cc["service"] is None):
                errs.append(required(at, "exactly one of url or service is required"))
            elif cc["url"] is not None:
                errs.extend(_webhook_url(child(at, "url"), cc["url"]))
            else:
                errs.extend(_webhook_service(child(at, "service"), cc["service"]))
        errs.extend(_review_versions(conversion["reviewVersions"],
                                     child(path, "conversionReviewVersions")))
    else:
        if cc is not None:
            errs.append(forbidden(child(path, "webhookClientConfig"),
                                  "should not be set when strategy is not set to Webhook"))
        if conversion["reviewVersions"]:
            errs.append(forbidden(child(path, "conversionReviewVersions"),
                                  "should not be set when strategy is not set to Webhook"))
    return errs


def _review_versions(versions: list[str], path: str) -> list[CRDProblem]:
    if not versions:
        return [required(path)]
    errs: list[CRDProblem] = []
    seen: set[str] = set()
    accepted = False
    for i, v in enumerate(versions):
        if v in seen:
            errs.append(invalid(index(path, i), v, "duplicate version"))
            continue
        seen.add(v)
        for msg in is_dns1035_label(v):
            errs.append(invalid(index(path, i), v, msg))
        accepted = accepted or v in ("v1", "v1beta1")
    if not accepted:
        errs.append(invalid(path, versions, "must include at least one of v1, v1beta1"))
    return errs


_FORM = "; desired format: https://host[/path]"


def _webhook_url(path: str, url: str) -> list[CRDProblem]:
    """``webhook.ValidateWebhookURL`` (https forced); Go's ``url.Parse`` approximated by
    ``urllib.parse``."""
    try:
        u = urllib.parse.urlsplit(url)
    except ValueError as exc:
        return [required(path, f"url must be a valid URL: {exc}{_FORM}")]
    errs: list[CRDProblem] = []
    if u.scheme != "https":
        errs.append(invalid(path, u.scheme, "'https' is the only allowed URL scheme" + _FORM))
    host = u.netloc.rsplit("@", 1)[-1]
    if not host:
        errs.append(invalid(path, host, "host must be specified" + _FORM))
    if "@" in u.netloc:
        errs.append(invalid(path, u.netloc.rsplit("@", 1)[0],
                            "user information is not permitted in the URL"))
    if u.fragment:
        errs.append(invalid(path, u.fragment, "fragments are not permitted in the URL"))
    if u.query:
        errs.append(invalid(path, u.query, "query parameters are not permitted in the URL"))
    return errs


def _webhook_service(path: str, service: Mapping[str, Any]) -> list[CRDProblem]:
    """``webhook.ValidateWebhookService``.

    Upstream passes the service's name as ``namespace`` and its namespace as ``name``
    (``ValidateWebhookService(path, cc.Service.Name, cc.Service.Namespace, ...)`` against
    ``func ValidateWebhookService(fldPath, namespace, name string, ...)``): an empty
    namespace is reported as ``service.name: Required value`` and the other way round.
    The port keeps that.
    """
    errs: list[CRDProblem] = []
    if not service["namespace"]:
        errs.append(required(child(path, "name")))
    if not service["name"]:
        errs.append(required(child(path, "namespace")))
    port = service["port"]
    if not 1 <= port <= 65535:
        errs.append(invalid(child(path, "port"), port,
                            "port is not valid: must be between 1 and 65535, inclusive"))
    url_path = service["path"]
    if url_path is None or url_path in ("/", ""):
        return errs
    if url_path == "//":
        return [*errs, invalid(child(path, "path"), url_path, "segment[0] may not be empty")]
    if not url_path.startswith("/"):
        errs.append(invalid(child(path, "path"), url_path, "must start with a '/'"))
    check = url_path[1:]
    if check.endswith("/"):
        check = check[:-1]
    for i, step in enumerate(check.split("/")):
        if not step:
            errs.append(invalid(child(path, "path"), url_path,
                                f"segment[{i}] may not be empty"))
            continue
        for failure in is_dns1123_subdomain(step):
            errs.append(invalid(child(path, "path"), url_path,
                                f"segment[{i}]: {failure}"))
    return errs


def _approval(group: str, annotations: Mapping[str, Any]) -> list[CRDProblem]:
    """``validateAPIApproval`` on create."""
    protected = (group in ("k8s.io", "kubernetes.io")
                 or group.endswith((".k8s.io", ".kubernetes.io")))
    if not protected:
        return []
    at = key("metadata.annotations", _APPROVAL)
    value = annotations.get(_APPROVAL) or ""
    if not isinstance(value, str):
        raise _fail(at, value, "string")
    if not value:
        return [required(at, f'protected groups must have approval annotation "{_APPROVAL}", '
                             "see https://github.com/kubernetes/enhancements/pull/1111")]
    if value.startswith("unapproved"):
        return []
    u = urllib.parse.urlsplit(value) if value.startswith("/") or "://" in value else None
    if u is not None and u.netloc and u.scheme:
        return []
    return [invalid(at, value, f'protected groups must have approval annotation "{_APPROVAL}" '
                               'with either a URL or a reason starting with "unapproved", see '
                               "https://github.com/kubernetes/enhancements/pull/1111")]
