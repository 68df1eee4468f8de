"""A stand-in for ``go`` that answers what ``compatfuzz apiserver install`` asks in a
second, so the build's messages, lock and failures are tested without a 5-minute build.

``fake_go(folder)`` writes it and returns its path (for ``COMPATFUZZ_GO``). It logs each
call to ``calls.log`` beside itself; ``go build`` writes a shell script in place of the
binary; ``FAKE_GO_FAIL=1`` makes ``go build`` fail with a compiler-like message.
"""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = '''\
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "calls.log", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
if args[:2] == ["env", "GOVERSION"]:
    print("go1.26.0")
elif args[:2] == ["list", "-deps"]:
    print("go: downloading example.com/dep v1.0.0", file=sys.stderr)
    for name in ("runtime", "example.com/dep", *args[2:]):
        print(name)
elif args[:1] == ["build"]:
    if os.environ.get("FAKE_GO_FAIL"):
        print("# k8s.io/kubernetes/cmd/kube-apiserver", file=sys.stderr)
        print("main.go:3:2: undefined: oops", file=sys.stderr)
        sys.exit(1)
    print("example.com/dep", file=sys.stderr)
    print(args[-1], file=sys.stderr)
    out = Path(args[args.index("-o") + 1])
    out.write_text("#!/bin/sh\\nexit 0\\n")
    out.chmod(0o755)
else:
    sys.exit(f"fake go: unexpected {args}")
'''


def fake_go(folder: Path) -> Path:
    """Write the fake ``go`` into ``folder`` and return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fakego.py").write_text(SCRIPT)
    go = folder / "go"
    go.write_text(f"#!/bin/sh\nexec {sys.executable} {folder / 'fakego.py'} \"$@\"\n")
    go.chmod(0o755)
    return go


def calls(go: Path) -> list[str]:
    """The fake ``go``'s calls so far, one string of arguments each."""
    log = go.parent / "calls.log"
    return log.read_text().splitlines() if log.is_file() else []
