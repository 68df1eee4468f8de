"""Issue 22, item 5: a Redis password never reaches the terminal, report.json or the HTML page.

``--database redis://:secret@host/0`` used to be printed in the run header ("database=...")
and "saved in the example database ..." lines, and stored verbatim in report.json and
report.html. The spec is now redacted where it becomes text (``_database.redact``), so
every output shows ``redis://:***@host/0``: the header, the failure lines, the fallback
notice, the "cannot reach" error, report.json, report.html and JUnit.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compatfuzz.roundtrip._engine._database import redact
from tests._net import free_port, redis_server
from tests.faults._project import LOSSY, command, project

redis = pytest.importorskip("redis")

SECRET = "s3cr3t-Pw-22"

userinfo = st.text(st.characters(codec="ascii", categories=["L", "N"],
                                 include_characters="-._~!$&'()*+,;=%"), max_size=12)


@given(user=userinfo, password=userinfo.filter(bool),
       scheme=st.sampled_from(["redis", "rediss"]), port=st.integers(1, 65535))
def test_redact_keeps_everything_but_the_password(user: str, password: str, scheme: str,
                                                  port: int) -> None:
    url = f"{scheme}://{user}:{password}@ci-redis.example:{port}/0"
    shown = redact(url)
    assert shown == f"{scheme}://{user}:***@ci-redis.example:{port}/0"
    assert redact(shown) == shown
    assert redact(f"note: the example database {url} stopped") == (
        f"note: the example database {shown} stopped")


def test_redact_query_passwords_and_leaves_other_text_alone() -> None:
    assert redact("redis://h:6379/0?password=x&db=1") == "redis://h:6379/0?password=***&db=1"
    assert redact("unix://:pw@/run/redis.sock?db=0") == "unix://:***@/run/redis.sock?db=0"
    for plain in ("redis://h:6379/0", ".hypothesis/examples", "user@host: a:b@c", "none"):
        assert redact(plain) == plain


@pytest.fixture
def locked_redis(tmp_path: Path) -> Iterator[str]:
    """A real redis-server that wants the password SECRET."""
    with redis_server(tmp_path, password=SECRET) as (url, _):
        yield url


def _fuzz(tmp_path: Path, url: str) -> subprocess.CompletedProcess[str]:
    config = project(tmp_path, LOSSY)
    argv = command(config, "--property", "roundtrip", "--max-examples", "50",
                   "--html", str(tmp_path / "report.html"),
                   "--junit", str(tmp_path / "junit.xml"))
    argv[argv.index("--database") + 1] = url
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          check=False)


def test_the_password_is_in_no_output(locked_redis: str, tmp_path: Path) -> None:
    done = _fuzz(tmp_path, locked_redis)
    assert done.returncode == 1, done.stderr  # it did use the database: the lossy pair fails
    shown = locked_redis.replace(SECRET, "***")
    assert f"database={shown}" in done.stderr
    assert f"saved in the example database {shown}" in done.stderr
    outputs = {"stderr": done.stderr}
    for name in ("report.json", "report.html", "junit.xml"):
        outputs[name] = (tmp_path / name).read_text()
    for cx in (tmp_path / "compatfuzz-counterexamples").iterdir():
        outputs[cx.name] = cx.read_text()
    assert shown in outputs["report.json"] and shown in outputs["report.html"]
    assert [name for name, text in outputs.items() if SECRET in text] == []


def test_the_password_is_not_in_the_cannot_reach_error(tmp_path: Path) -> None:
    url = f"redis://:{SECRET}@127.0.0.1:{free_port()}/0?password={SECRET}"
    done = _fuzz(tmp_path, url)
    assert done.returncode == 2
    assert "cannot reach the Redis example database" in done.stderr
    assert SECRET not in done.stderr and "redis://:***@127.0.0.1" in done.stderr


def test_the_password_is_not_in_the_fallback_notice(tmp_path: Path) -> None:
    from tests.faults.test_redis import _vanishing_redis

    url, server = _vanishing_redis()
    url = url.replace("redis://", f"redis://:{SECRET}@")
    try:
        done = _fuzz(tmp_path, url)
    finally:
        server.close()
    assert done.returncode == 1, done.stderr
    shown = url.replace(SECRET, "***")
    assert f"note: the example database {shown} stopped answering" in done.stderr
    report = (tmp_path / "report.json").read_text()
    assert SECRET not in done.stderr and SECRET not in report
    assert SECRET not in (tmp_path / "report.html").read_text()
