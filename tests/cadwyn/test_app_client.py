"""The in-process client of an app: a collected client's app is shut down where the run can
go on, never inside the garbage collector (a later unit's example waited there until its
deadline), and a forked process never shuts down its parent's app."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("starlette.testclient")

import anyio.to_thread
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from compatfuzz.cadwyn import _routes
from compatfuzz.cadwyn._routes import AppClient, close_retired


def _app(shutdowns: list[bool], go_on: threading.Event) -> Starlette:
    """An app whose shutdown waits for the test's main thread to go on (as an app's may
    wait for a lock the main thread holds), and records whether it did."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        shutdowns.append(await anyio.to_thread.run_sync(go_on.wait, 3.0))

    async def ping(request: Any) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/ping", ping)], lifespan=lifespan)


def _collected_client(app: Starlette) -> None:
    client = AppClient(app)
    assert client.request("GET", "/ping", "v1").status == 200
    cycle: list[Any] = [client]
    cycle.append(cycle)  # only the garbage collector frees it, wherever it runs next
    client.cycle = cycle  # type: ignore[attr-defined]


def test_a_collected_client_s_app_shuts_down_after_the_collection_not_inside_it() -> None:
    shutdowns: list[bool] = []
    go_on = threading.Event()
    _collected_client(_app(shutdowns, go_on))
    gc.collect()  # inside it, a shutdown that needs the main thread could only time out
    go_on.set()
    close_retired()
    assert shutdowns == [True]


def test_the_next_request_closes_the_clients_collected_since() -> None:
    shutdowns: list[bool] = []
    go_on = threading.Event()
    go_on.set()
    _collected_client(_app(shutdowns, go_on))
    gc.collect()
    other = AppClient(_app([], go_on))
    other.request("GET", "/ping", "v1")
    assert shutdowns == [True]
    other.close()


def test_a_client_retired_in_another_process_is_left_to_it() -> None:
    shutdowns: list[bool] = []
    go_on = threading.Event()
    go_on.set()
    client = AppClient(_app(shutdowns, go_on))
    client.request("GET", "/ping", "v1")
    test_client = client._client
    # as a forked worker sees its parent's client: the parent's pid, no event loop thread
    _routes._retire(os.getpid() + 1, test_client)
    close_retired()
    assert shutdowns == []
    assert id(test_client) not in _routes._OPEN  # forgotten here all the same
    client._client = None
    test_client.__exit__(None, None, None)


def test_an_answer_that_does_not_fit_the_response_model_is_said_so() -> None:
    from fastapi import FastAPI
    from pydantic import BaseModel, Field

    from compatfuzz.cadwyn._routes import RouteError

    class Out(BaseModel):
        name: str = Field(min_length=1)

    app = FastAPI()

    @app.get("/thing", response_model=Out)
    async def thing() -> dict[str, str]:
        return {"name": ""}

    client = AppClient(app)
    with pytest.raises(RouteError) as caught:
        client.request("GET", "/thing", "v1")
    message = str(caught.value)
    assert "does not fit the response model v1 declares" in message
    assert "response.name: String should have at least 1 character (got '')" in message
    assert caught.value.user_traceback == ""  # FastAPI's own text would only repeat it
    client.close()


def test_a_validation_error_is_summed_up_by_its_errors_not_its_last_line() -> None:
    from pydantic import BaseModel, ValidationError

    from compatfuzz.cadwyn._routes import summary

    class Model(BaseModel):
        items: list[int]

    with pytest.raises(ValidationError) as caught:
        Model(items=["x"])
    line = summary(caught.value)
    assert line.startswith("ValidationError: items.0: Input should be a valid integer")
    assert "For further information" not in line
    assert summary(KeyError("tag")) == "KeyError: 'tag'"
