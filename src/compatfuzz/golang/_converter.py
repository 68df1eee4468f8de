"""The Go converter kind: the user's API packages, converted by controller-runtime.

One implementation of ``roundtrip._check._converter.Converter``.  Every conversion is one
ConversionReview handed to controller-runtime's conversion webhook handler inside the
built program (``_build``): through a pipe to a long-lived process for the model
(``_process``), and, for a real API server, through the same handler served over HTTPS
(:meth:`GoConverter.webhook`).  So a pass means the operator's own webhook would convert
the same way: the same hub detection, ``ConvertTo``/``ConvertFrom`` calls and errors
(``sigs.k8s.io/controller-runtime/pkg/webhook/conversion/conversion.go``).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import shutil
import subprocess
import tempfile
import uuid
import weakref
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any

from compatfuzz.errors import InvalidArgument
from compatfuzz.golang._build import Driver, GoBuildError, build
from compatfuzz.golang._process import GoPanic, GoProcess, user_frames
from compatfuzz.roundtrip._check._converter import Check, WebhookAddress
from compatfuzz.roundtrip._check._webhook import REVIEW_API_VERSION, converted_object

__all__ = ["GoConverter", "go_converter"]


class GoConverter:
    """Converts through the user's Go API packages (see the module docstring)."""

    #: Go gets a JSON copy: it cannot change the caller's object (no ``no_mutation``)
    isolated = True

    def __init__(self, driver: Driver, *, owner: str = "api") -> None:
        self.owner = owner
        self.driver = driver
        self.kinds = _kinds(driver)
        self._process = GoProcess(driver)
        self._server: subprocess.Popen[bytes] | None = None
        self._address: WebhookAddress | None = None
        #: what to undo when the converter goes away (the webhook server, its certificates)
        self._undo: list[Callable[[], Any]] = []
        weakref.finalize(self, GoConverter._stop, self._process, self._undo)

    @staticmethod
    def _stop(process: GoProcess, undo: list[Callable[[], Any]]) -> None:
        process.close()
        for step in undo:
            with contextlib.suppress(Exception):
                step()

    def __repr__(self) -> str:
        return f"go_converter({str(self.driver.root)!r}, {list(self.driver.packages)!r})"

    def convert(self, obj: Any, a: str, b: str, *, label: str, hub: str | None,
                target: Callable[[str], Any], check: Check) -> Any:
        desired = str(target(b))
        uid = str(uuid.uuid4())
        review = {"apiVersion": REVIEW_API_VERSION, "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": desired, "objects": [obj]}}
        who = f"{self.owner}: the Go conversion of {label} {a} -> {b}"
        reply = self._process.ask(review)
        if reply.get("panic"):
            frames = user_frames(str(reply.get("stack", "")), self.driver.root)
            raise GoPanic(f"{who} panicked: {reply['panic']}"
                          + "".join(f"\n  at {f}" for f in frames))
        return check(converted_object(int(reply.get("status", 0)), reply["body"], uid,
                                      desired, who), a, b)

    def hub_of(self, group: str, kind: str) -> str | None:
        """The version of ``kind`` that is a ``conversion.Hub`` (None: scheme.Convert)."""
        for info in self.kinds:
            if (info["group"], info["kind"]) == (group, kind):
                return info.get("hub") or None
        return None

    def reachable(self, a: str, b: str) -> bool:
        return True

    def check_chains(self, versions: Collection[str]) -> None:
        """Raise ``InvalidArgument`` unless one registered kind has every version, and
        controller-runtime would convert it (a Hub, every other version Convertible)."""
        wanted = set(versions)
        for kind in self.kinds:
            if wanted <= set(kind["versions"]):
                if kind.get("problem"):
                    raise InvalidArgument(
                        f"API {self.owner!r}: controller-runtime cannot convert "
                        f"{kind['kind']}: {kind['problem']}; make the storage version the "
                        "Hub (func (*T) Hub() {}) and every other version "
                        "conversion.Convertible (ConvertTo/ConvertFrom)")
                return
        have = "; ".join(f"{k['kind']}.{k['group']}: {', '.join(k['versions'])}"
                         for k in self.kinds) or "no kinds"
        raise InvalidArgument(
            f"API {self.owner!r}: no kind in the Go packages {', '.join(self.driver.packages)}"
            f" has every version of the CRD ({', '.join(sorted(wanted))}); they register "
            f"{have}. Add the missing versions' packages to packages =")

    def webhook(self) -> WebhookAddress | None:
        """The same program serving controller-runtime's handler over HTTPS, started on
        first call with a certificate of its own (the CRD's caBundle)."""
        if self._address is None:
            self._address = self._serve()
        return self._address

    def _serve(self) -> WebhookAddress:
        from compatfuzz.apiserver._real._pki import mint

        # a plain folder, removed by _stop: a TemporaryDirectory collected first would
        # warn (ResourceWarning) wherever the garbage collector happens to run
        certs = tempfile.mkdtemp(prefix="compatfuzz-go-webhook-")
        self._undo.append(functools.partial(shutil.rmtree, certs, ignore_errors=True))
        ca = mint(Path(certs))
        proc = subprocess.Popen(
            [str(self.driver.binary), "serve", "-listen", "127.0.0.1:0",
             "-cert", str(ca.webhook.cert), "-key", str(ca.webhook.key)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self._server = proc
        self._undo.append(proc.kill)
        atexit.register(_kill, proc)
        assert proc.stdout is not None
        first = proc.stdout.readline().decode().split()
        if len(first) != 2 or first[0] != "listening":
            raise GoBuildError(f"the Go converter's webhook did not start (exit "
                               f"{proc.poll()}); run {self.driver.binary} serve to see why")
        return WebhookAddress(f"https://{first[1]}/convert", str(ca.ca))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        proc.kill()


def _kinds(driver: Driver) -> list[dict[str, Any]]:
    done = subprocess.run([str(driver.binary), "kinds"], capture_output=True, text=True,
                          check=False, timeout=60)
    if done.returncode != 0:
        raise GoBuildError(f"the Go packages {', '.join(driver.packages)} could not be "
                           f"registered in a scheme: {done.stderr.strip()}")
    kinds: list[dict[str, Any]] = json.loads(done.stdout) or []
    return kinds


def go_converter(module: str | Path, packages: Iterable[str], *,
                 owner: str = "api") -> GoConverter:
    """Return a converter that converts through the Go API ``packages`` of the Go module
    in folder ``module``, as controller-runtime's conversion webhook would; pass it as
    ``API.from_crd(..., converter=go_converter(".", ["./api/v1alpha1", "./api/v1"]))``.

    ``packages`` are import paths, or paths relative to the module (``./api/v1``); each
    must have ``AddToScheme``.  The program is built with the machine's Go into
    compatfuzz's cache (``COMPATFUZZ_GO_CACHE``, default ``~/.cache/compatfuzz/go``),
    once per change of the module's sources; the first build takes a minute or two.

    Raises:
        GoMissing: no ``go`` on PATH.
        GoBuildError: the packages do not build (the compiler's file:line), or one
            has no ``AddToScheme``.

    .. versionadded:: 0.2
    """
    return GoConverter(build(module, list(packages)), owner=owner)
