"""The run's conversion router on its own (no kube-apiserver): each ConversionReview goes
to the webhook of the worker whose pid its objects' names carry (``cf-<pid>-<n>``), and
one it cannot place is a ``Failure`` that says why."""

from __future__ import annotations

import http.client
import json
import os
import ssl
from pathlib import Path
from typing import Any

import pytest

from compatfuzz.apiserver._real._pki import mint
from compatfuzz.apiserver._real._process import free_port
from compatfuzz.apiserver._real._router import ConversionRouter, route_of, socket_path
from compatfuzz.apiserver._real._webhook import ConversionWebhook, listen

CRD = "gadgets.example.com"


def _review(names: list[Any], uid: str = "u-1") -> bytes:
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                       "request": {"uid": uid, "desiredAPIVersion": "example.com/v2",
                                   "objects": [{"apiVersion": "example.com/v1",
                                                "metadata": {"name": n}} for n in names]},
                       }).encode()


def test_the_pid_in_the_names_says_which_worker_converts() -> None:
    assert route_of(_review(["cf-4242-0", "cf-4242-17"])) == ("u-1", 4242, "")
    uid, pid, why = route_of(_review(["cf-4242-0", "cf-4343-1"]))
    assert (uid, pid) == ("u-1", None) and "several workers" in why
    for name in ("frobber", "cf-x-1", "cf-0-1", "cf-1/../2-3", None):
        uid, pid, why = route_of(_review([name]))
        assert pid is None and "not created by a compatfuzz worker" in why, name
    assert route_of(b"{}")[1:] == (None, "not a ConversionReview")


@pytest.fixture
def router(tmp_path: Path) -> Any:
    pki = mint(tmp_path / "pki")
    folder = tmp_path / "webhooks"
    folder.mkdir(mode=0o700)
    port = free_port()
    router = ConversionRouter(listen(port), str(pki.webhook.cert), str(pki.webhook.key),
                              folder)
    ctx = ssl.create_default_context(cafile=str(pki.ca))

    def post(body: bytes, crd: str = CRD) -> dict[str, Any]:
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
        try:
            conn.request("POST", f"/convert/{crd}?timeout=30s", body=body)
            answer: dict[str, Any] = json.loads(conn.getresponse().read())
            return answer["response"]
        finally:
            conn.close()

    try:
        yield folder, post
    finally:
        router.close()


def test_each_request_is_answered_by_its_worker_s_webhook(router: Any) -> None:
    folder, post = router

    def converter(who: str) -> Any:
        def convert(obj: dict[str, Any], a: str, b: str) -> dict[str, Any]:
            if who == "buggy":
                raise ValueError("the buggy worker's converter fails")
            return {**obj, "apiVersion": f"example.com/{b}", "by": who}
        return convert

    # two "workers" (one process here: the pid is only the socket's name)
    good = ConversionWebhook(0, "", "", {CRD: converter("good")},
                             unix=socket_path(folder, 101))
    buggy = ConversionWebhook(0, "", "", {CRD: converter("buggy")},
                              unix=socket_path(folder, 202))
    try:
        answer = post(_review(["cf-101-0", "cf-101-1"]))
        assert answer["result"] == {"status": "Success"}
        assert [o["by"] for o in answer["convertedObjects"]] == ["good", "good"]
        answer = post(_review(["cf-202-0"], uid="u-2"))
        assert answer["uid"] == "u-2" and answer["result"]["status"] == "Failure"
        assert answer["result"]["message"] == "the buggy worker's converter fails"
        # the bookkeeping lands in the process that ran the converter, and only there
        assert isinstance(buggy.errors.get(CRD), ValueError) and not good.errors
        assert (good.calls, buggy.calls) == (1, 1)  # one request each
    finally:
        good.close()
        buggy.close()
    assert not os.path.exists(socket_path(folder, 101))  # closed: its socket is gone


def test_a_pid_no_worker_serves_is_a_failure_that_says_why(router: Any) -> None:
    folder, post = router
    answer = post(_review(["cf-303-5"], uid="u-3"))
    assert answer["uid"] == "u-3" and answer["result"]["status"] == "Failure"
    message = answer["result"]["message"]
    assert message.startswith("compatfuzz's conversion router: worker process 303")
    assert "serves no conversions now" in message
    # a socket a killed worker left behind: refused, the same answer
    stale = ConversionWebhook(0, "", "", {}, unix=socket_path(folder, 404))
    stale._server.stop()  # stops listening, leaves the file
    try:
        assert "worker process 404" in post(_review(["cf-404-0"]))["result"]["message"]
    finally:
        stale.close()
    message = post(_review(["someone-else"]))["result"]["message"]
    assert "not created by a compatfuzz worker" in message


def test_a_process_that_gets_an_ended_ones_pid_does_not_reuse_its_names() -> None:
    """Names are ``cf-<pid>-<n>``: a long night forks many workers, and a later one may
    get an ended one's pid while that one's objects are still in etcd."""
    from compatfuzz.apiserver._real import _backend

    kind = _backend.RealKind(None, group="example.com", plural="gadgets",  # type: ignore[arg-type]
                             namespaced=True, storage="v1")
    first = [kind.new_name() for _ in range(3)]
    _backend._names.clear()  # as in a new process with the same pid
    again = [kind.new_name() for _ in range(3)]
    assert not set(first) & set(again)
    assert all(route_of(_review([name]))[1] == os.getpid() for name in first + again)
