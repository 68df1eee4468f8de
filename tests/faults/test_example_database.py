"""Issue 22, item 4: what a unit replays from a shared example database.

Whatever else is stored under a unit's key (junk, another tool's entries, damaged
copies), the failures compatfuzz saved are what it replays first, reads are bounded, and
the run says what it replayed. The same check against a real Redis is in
``test_redis.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from compatfuzz.roundtrip._engine._database import MAX_FOREIGN, NamespacedDatabase, namespaced
from tests.faults._project import LOSSY, command, project

KEY = b"k" * 48  # a Hypothesis database key is a 48-byte digest
entries = st.binary(min_size=1, max_size=40)


@given(saved=st.sets(entries, min_size=1, max_size=5),
       junk=st.lists(entries, max_size=300), damaged=st.lists(entries, max_size=5))
def test_the_saved_failures_are_replayed_whatever_else_is_there(
        saved: set[bytes], junk: list[bytes], damaged: list[bytes]) -> None:
    inner = InMemoryExampleDatabase()
    db = namespaced(inner, "api::roundtrip[v1->v2]")
    assert isinstance(db, NamespacedDatabase)
    for value in saved:
        db.save(KEY, value)  # what Hypothesis does on a failure
    for value in junk:  # written straight into the shared key by something else
        inner.save(b"compatfuzz:api::roundtrip[v1->v2]:" + KEY, value)
    for value in damaged:  # written under compatfuzz's own key, without its tag
        inner.save(b"compatfuzz-known:api::roundtrip[v1->v2]:" + KEY, value)
    assert sorted(db.fetch(KEY)) == sorted(saved)
    note = db.note
    assert note.known == len(saved) and note.foreign == 0
    assert note.ignored == len(set(junk) - saved)
    assert note.damaged == len(set(damaged))
    assert f"replayed the {len(saved)} failure" in note.describe()


@given(junk=st.sets(entries, max_size=300))
def test_without_a_saved_failure_a_few_other_entries_are_replayed(junk: set[bytes]) -> None:
    """Failures saved before compatfuzz kept its own key are still replayed, but never
    more than MAX_FOREIGN of whatever is there, shortest first (as Hypothesis would)."""
    inner = InMemoryExampleDatabase()
    db = namespaced(inner, "u")
    for value in junk:
        inner.save(b"compatfuzz:u:" + KEY, value)
    got = list(db.fetch(KEY))
    assert got == sorted(junk, key=lambda v: (len(v), v))[:MAX_FOREIGN]
    assert db.note.foreign + db.note.ignored == len(junk)


def test_a_fixed_failure_leaves_compatfuzz_s_key_too() -> None:
    inner = InMemoryExampleDatabase()
    db = namespaced(inner, "u")
    db.save(KEY, b"fail")
    db.move(KEY, KEY + b".secondary", b"fail")  # Hypothesis found a smaller one
    assert list(db.fetch(KEY)) == [] and list(db.fetch(KEY + b".secondary")) == [b"fail"]
    db.save(KEY, b"f")
    db.delete(KEY, b"f")  # it passes now
    assert list(db.fetch(KEY)) == [] and db.note.known == 0


def test_the_run_says_what_it_replayed(tmp_path: Path) -> None:
    config = project(tmp_path, LOSSY)
    argv = command(config, "--property", "roundtrip", "--max-examples", "50")
    argv[argv.index("--database") + 1] = str(tmp_path / "db")
    runs = [subprocess.run(argv, capture_output=True, text=True, timeout=60,
                           cwd=tmp_path, check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [1, 1], runs[1].stderr
    assert "example database:" not in runs[0].stderr  # nothing was saved yet
    assert runs[1].stderr.count("example database: replayed the 1 failure compatfuzz "
                                "saved for this unit first") == 2
