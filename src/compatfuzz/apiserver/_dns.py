"""The DNS name rules a CRD's names are held to, with the API server's messages.

A port of ``IsDNS1035Label`` and ``IsDNS1123Subdomain`` from k8s.io/apimachinery
``pkg/util/validation/validation.go``, their messages word for word. Their own module
because three layers of CRD validation need them: the names (``_crd_spec``), the
versions and group (``_crd_validation``), and the ``kind`` of an embedded resource's
default (``_crd_defaults``, which ``_crd_schema`` calls and so cannot import
``_crd_spec``, which calls ``_crd_schema``).
"""

from __future__ import annotations

import re

from compatfuzz.schema._re2 import compile_python

__all__ = ["is_dns1035_label", "is_dns1123_subdomain"]

_DNS1035 = compile_python("^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = compile_python(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character "
                "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
                "'[a-z]([-a-z0-9]*[a-z0-9])?')")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                  "characters, '-' or '.', and must start and end with an alphanumeric "
                  "character (e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _dns(value: str, limit: int, pattern: re.Pattern[str], message: str) -> list[str]:
    """The errors of one of ``validation.go``'s DNS checks: too long, then not matching."""
    errs = []
    if len(value) > limit:
        errs.append(_max_len(limit))
    if not pattern.match(value):
        errs.append(message)
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``utilvalidation.IsDNS1035Label``."""
    return _dns(value, 63, _DNS1035, _DNS1035_MSG)


def is_dns1123_subdomain(value: str) -> list[str]:
    """``utilvalidation.IsDNS1123Subdomain``."""
    return _dns(value, 253, _DNS1123_SUBDOMAIN, _SUBDOMAIN_MSG)
