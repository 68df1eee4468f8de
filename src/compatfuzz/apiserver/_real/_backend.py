"""One kind of a CRD on a running kube-apiserver: installed with a Webhook conversion,
then created, read and updated in any of its versions, as a client would.

The CRD is installed from the versions compatfuzz loaded (their raw
``openAPIV3Schema``), with ``conversion.strategy: Webhook`` pointing at the given URL and
CA, and without subresources: with a ``status`` subresource the main endpoint ignores
``status`` on create and update, so a round trip could never test its conversion.
"""

from __future__ import annotations

import base64
import itertools
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

from compatfuzz.apiserver._real._client import Client, ServerError
from compatfuzz.errors import CompatfuzzError

__all__ = ["CRDRefused", "RealKind", "crd_document", "install"]

#: each process's name counter, started at a random number: a later process that gets an
#: ended one's pid (a long night forks many) must not reuse its objects' names
_names: dict[int, Iterator[int]] = {}

#: metadata the server owns: never sent on create, never compared
SERVER_FIELDS = ("resourceVersion", "uid", "creationTimestamp", "generation",
                 "managedFields", "selfLink", "deletionTimestamp",
                 "deletionGracePeriodSeconds")


class CRDRefused(CompatfuzzError):
    """The API server refused to install the CRD (its message says why)."""


def crd_document(*, group: str, kind: str, plural: str, scope: str,
                 versions: Mapping[str, Mapping[str, Any]], storage: str,
                 webhook_url: str | None, ca_bundle: bytes | None) -> dict[str, Any]:
    """The ``apiextensions.k8s.io/v1`` CRD to install (``versions``: name -> schema)."""
    spec: dict[str, Any] = {
        "group": group,
        "names": {"plural": plural, "singular": kind.lower(), "kind": kind,
                  "listKind": f"{kind}List"},
        "scope": scope,
        "versions": [{"name": name, "served": True, "storage": name == storage,
                      "schema": {"openAPIV3Schema": dict(schema)}}
                     for name, schema in versions.items()],
    }
    if webhook_url is not None and len(versions) > 1:
        client: dict[str, Any] = {"url": webhook_url}
        if ca_bundle:
            client["caBundle"] = base64.b64encode(ca_bundle).decode()
        spec["conversion"] = {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": client}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"}, "spec": spec}


def install(client: Client, document: dict[str, Any], *, source: str = "",
            timeout: float = 60.0) -> None:
    """Create (or replace) the CRD and wait until the server serves every version.

    Raises:
        CRDRefused: the server refused the CRD (a non-structural schema, a bad default,
            ...), or did not establish it within ``timeout`` seconds.
    """
    name = document["metadata"]["name"]
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    try:
        client.request("POST", path, document)
    except ServerError as exc:
        if exc.code != 409:
            raise CRDRefused(
                f"{source or name}: the API server refuses the CRD {name}: "
                f"{exc.explanation()}\n  fix: the CRD must be one a cluster accepts (kubectl "
                "apply -f would say the same); a structural schema is required by "
                "apiextensions.k8s.io/v1"
            ) from None
        current = client.request("GET", f"{path}/{name}")
        document = {**document, "metadata": {**document["metadata"],
                    "resourceVersion": current["metadata"]["resourceVersion"]}}
        client.request("PUT", f"{path}/{name}", document)
    deadline = time.monotonic() + timeout
    spec = document["spec"]
    while True:
        crd = client.request("GET", f"{path}/{name}")
        conditions = {c.get("type"): c for c in (crd.get("status") or {}).get("conditions") or []}
        established = conditions.get("Established", {}).get("status") == "True"
        if established and _served(client, spec):
            return
        refused = conditions.get("NamesAccepted", {})
        if refused.get("status") == "False":
            raise CRDRefused(f"{source or name}: the API server does not accept the names "
                             f"of {name}: {refused.get('message')}")
        if time.monotonic() > deadline:
            raise CRDRefused(f"{source or name}: the API server did not establish {name} "
                             f"within {timeout:g} s; conditions: {list(conditions.values())}")
        time.sleep(0.1)


def _served(client: Client, spec: Mapping[str, Any]) -> bool:
    for version in spec["versions"]:
        if not version.get("served", True):
            continue  # a 404 is what such a version answers
        try:
            client.request("GET", f"/apis/{spec['group']}/{version['name']}/"
                           f"{spec['names']['plural']}?limit=1")
        except ServerError as exc:
            if exc.code in (404, 503):
                return False
            raise
    return True


#: objects of a kind created between two sweeps (``RealKind.sweep``)
SWEEP_EVERY = 200


class RealKind:
    """Requests for one kind: ``create``, ``get`` and ``update`` in a version."""

    def __init__(self, client: Client, *, group: str, plural: str, namespaced: bool,
                 storage: str) -> None:
        self.client = client
        self.group = group
        self.plural = plural
        self.namespaced = namespaced
        self.storage = storage
        self.created = 0  # since the last sweep

    def _path(self, version: str, name: str | None = None) -> str:
        ns = f"/namespaces/{self.client.endpoint.namespace}" if self.namespaced else ""
        tail = f"/{name}" if name else ""
        return f"/apis/{self.group}/{version}{ns}/{self.plural}{tail}"

    def new_name(self) -> str:
        """A name no other example (or process) uses on this server."""
        pid = os.getpid()
        counter = _names.get(pid)
        if counter is None:
            counter = _names[pid] = itertools.count(int.from_bytes(os.urandom(4), "big") << 16)
        return f"cf-{pid}-{next(counter)}"

    def prepare(self, obj: dict[str, Any], name: str) -> dict[str, Any]:
        """``obj`` as a client creates it: our name and namespace, no server fields."""
        out = dict(obj)
        meta = dict(out.get("metadata") or {}) if isinstance(out.get("metadata"), dict) \
            else {}
        for key in SERVER_FIELDS:
            meta.pop(key, None)
        meta.pop("generateName", None)
        meta["name"] = name
        if self.namespaced:
            meta["namespace"] = self.client.endpoint.namespace
        else:
            meta.pop("namespace", None)
        out["metadata"] = meta
        return out

    def create(self, obj: dict[str, Any], version: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.client.request("POST", self._path(version), obj)
        self.created += 1
        return answer

    def sweep(self, every: int | None = None) -> bool:
        """Delete this kind's objects in the run's namespace once ``every`` were created
        since the last sweep (call it between examples): a night of examples otherwise
        keeps every object in etcd and in kube-apiserver's watch cache. In the storage
        version, so no conversion runs (a converter that breaks reads cannot stop it).
        Whether it swept."""
        if self.created < (SWEEP_EVERY if every is None else every):
            return False
        self.created = 0
        try:
            self.client.request("DELETE", self._path(self.storage))
        except ServerError:
            return False  # no example's fault: the next sweep tries again
        return True

    def get(self, name: str, version: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.client.request("GET", self._path(version, name))
        return answer

    def update(self, obj: dict[str, Any], version: str) -> dict[str, Any]:
        name = obj["metadata"]["name"]
        answer: dict[str, Any] = self.client.request("PUT", self._path(version, name), obj)
        return answer


def comparable(obj: Any) -> Any:
    """``obj`` without what the server keeps for itself (resourceVersion, managedFields,
    ...) and without name and namespace, which compatfuzz chose."""
    if not isinstance(obj, dict):
        return obj
    out = dict(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items()
                if k not in SERVER_FIELDS and k not in ("name", "namespace")}
        if meta:
            out["metadata"] = meta
        else:
            out.pop("metadata")
    return out
