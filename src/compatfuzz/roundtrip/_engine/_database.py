"""Example databases for the round-trip properties.

Every unit's property is built from one function, so Hypothesis would give all of them
the same database key; :func:`namespaced` prefixes keys with the unit id instead (plain
public ``ExampleDatabase`` subclassing, no private attribute).  :func:`open_database`
turns the CLI's ``--database`` value into a database: a directory (default: Hypothesis's
own default database, ``.hypothesis/examples`` or under ``HYPOTHESIS_STORAGE_DIRECTORY``,
so it is the one pytest uses) or ``redis://host:port/db`` through
Hypothesis's ``RedisExampleDatabase`` so workers on many machines share failures.

A Redis outage in the middle of a nightly run must not end every unit with a one-line
``ConnectionError`` and 0 examples: :class:`FallbackDatabase` switches, for good,
to the local directory database on the first error and keeps a ``notice`` the runner
reports once.

Hypothesis swallows the ``OSError`` of a directory database it cannot write (a path that
is a file, a read-only folder, a full disk), so :class:`NamespacedDatabase` remembers the
keys it was asked to save and :meth:`NamespacedDatabase.kept` looks them up afterwards:
the CLI says "saved in the example database" only when it was.

Hypothesis's directory database reads each entry with ``Path.read_bytes()``, following
links and without a bound, so one entry that is a link to ``/dev/zero`` read 3.8 GB and
ended the run with ``MemoryError``.  :class:`GuardedDirectoryDatabase` reads entries
opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` (a link, a FIFO or a device is never read),
only regular files, at most :data:`MAX_FILE_BYTES` each; what it skips it names once, in
``notice``.  It finds a key's folder where Hypothesis puts it (the first 16 hex digits of
the key's SHA-384), a layout ``tests/security/test_hostile_links.py`` pins (a saved entry
is fetched back).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis.database import (
    DirectoryBasedExampleDatabase,
    ExampleDatabase,
    InMemoryExampleDatabase,
)

from compatfuzz.errors import InvalidArgument

__all__ = [
    "FallbackDatabase",
    "GuardedDirectoryDatabase",
    "database_label",
    "default_database_path",
    "forget_failing_unit",
    "is_hypothesis_default",
    "namespaced",
    "open_database",
    "project_home",
    "redact",
    "units_with_failures",
]


#: Hypothesis's sub-keys of a test's key (``ConjectureRunner.secondary_key`` and
#: ``pareto_key``, ``hypothesis/internal/conjecture/engine.py``): every other key is a
#: primary key, the one that holds a test's minimal failures.
_SUB_KEYS = (b".secondary", b".pareto")
#: A saved choice sequence larger than this is not one Hypothesis wrote for a unit.
MAX_ENTRY_BYTES = 1024 * 1024
#: At most this many entries are read from one key (a shared database may hold anything).
MAX_READ = 10_000
#: At most this many known failures are replayed per unit, shortest first.
MAX_KNOWN = 100
#: Entries in a unit's primary key that compatfuzz did not save are replayed only when it
#: saved none itself, and then at most this many, shortest first.
MAX_FOREIGN = 10
#: A file in a directory database larger than this is not an entry anyone saved (a sealed
#: entry is :data:`MAX_ENTRY_BYTES` plus its 12-byte tag and checksum).
MAX_FILE_BYTES = MAX_ENTRY_BYTES + 64
_TAG = b"cf1:"
#: The key listing the units that saved a failure (each value a sealed unit id), so a
#: shard can replay every unit of a job that has one without building every unit's test
#: to ask.  A unit whose replay finds nothing saved any more is dropped from
#: it (:func:`forget_failing_unit`).
INDEX_KEY = b"compatfuzz-failing-units"


def _seal(value: bytes) -> bytes:
    """``value`` as stored under compatfuzz's own key: a tag and a checksum first, so an
    entry something else wrote there is told apart (it is skipped, and counted)."""
    return _TAG + hashlib.blake2b(value, digest_size=8).digest() + value


def _unseal(entry: bytes) -> bytes | None:
    if not entry.startswith(_TAG) or len(entry) > MAX_ENTRY_BYTES + 12:
        return None
    digest, value = entry[4:12], entry[12:]
    return value if hashlib.blake2b(value, digest_size=8).digest() == digest else None


def _shortlex(value: bytes) -> tuple[int, bytes]:
    return len(value), value


@dataclass
class ReplayNote:
    """What :meth:`NamespacedDatabase.fetch` handed Hypothesis to replay for a unit's
    primary key: ``known`` failures compatfuzz saved, ``foreign`` other entries replayed,
    ``ignored`` other entries not replayed, ``damaged`` unreadable entries under
    compatfuzz's own key, ``more`` whether a read stopped at :data:`MAX_READ`."""

    known: int = 0
    foreign: int = 0
    ignored: int = 0
    damaged: int = 0
    more: bool = False

    def describe(self) -> str:
        """One sentence for the run's output, or ``""`` when nothing was there."""
        parts = []
        if self.known:
            parts.append(f"replayed the {_count(self.known, 'failure')} compatfuzz saved "
                         "for this unit first")
        if self.foreign:
            parts.append(f"replayed {_count(self.foreign, 'entry', 'entries')} under this "
                         "unit's key that compatfuzz did not mark as its own (an older "
                         "compatfuzz's, another tool's, or junk)")
        if self.ignored:
            plus = "+" if self.more else ""
            parts.append(f"ignored {self.ignored:,}{plus} other entries under this unit's "
                         "key (not saved by compatfuzz: junk, or another tool's)")
        if self.damaged:
            parts.append(f"skipped {_count(self.damaged, 'damaged entry', 'damaged entries')}"
                         " under compatfuzz's own key")
        return "; ".join(parts)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


class NamespacedDatabase(ExampleDatabase):
    """Delegates to ``inner`` with every key prefixed by ``namespace``.

    A shared database (Redis, a network folder) may hold thousands of entries under a
    unit's key that compatfuzz never saved; Hypothesis replays a key's entries shortest
    first within the unit's example budget, so junk shorter than a known failure used
    to use the whole budget and the failure was never replayed.
    Every failure Hypothesis saves under a primary key is therefore also kept under
    compatfuzz's own key (``compatfuzz-known:``, tagged and checksummed), and fetching a
    primary key returns those known failures only; other entries there are replayed
    (at most :data:`MAX_FOREIGN`) only when compatfuzz saved none.  Reads are bounded
    (:data:`MAX_READ` entries, :data:`MAX_ENTRY_BYTES` each) and :attr:`note` says what
    was replayed.
    """

    def __init__(self, inner: ExampleDatabase, namespace: str) -> None:
        super().__init__()
        self.inner = inner
        self.namespace = namespace
        self._prefix = b"compatfuzz:" + namespace.encode() + b":"
        self.saved_keys: set[bytes] = set()
        self._known = b"compatfuzz-known:" + namespace.encode() + b":"
        self.note = ReplayNote()

    def __repr__(self) -> str:
        return f"NamespacedDatabase({self.inner!r}, {self.namespace!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamespacedDatabase) and other.inner == self.inner
                and other.namespace == self.namespace)

    def __hash__(self) -> int:
        return hash((self.namespace, id(self.inner)))

    def _read(self, key: bytes) -> tuple[list[bytes], bool]:
        """Up to :data:`MAX_READ` entries of ``key`` (and whether more were left)."""
        entries = list(itertools.islice(self.inner.fetch(key), MAX_READ + 1))
        return entries[:MAX_READ], len(entries) > MAX_READ

    def fetch(self, key: bytes) -> Iterable[bytes]:
        shared, more = self._read(self._prefix + key)
        shared = [e for e in shared if 0 < len(e) <= MAX_ENTRY_BYTES]
        if key.endswith(_SUB_KEYS):
            return shared
        sealed, more_known = self._read(self._known + key)
        known_set = {v for v in map(_unseal, sealed) if v is not None}
        known = sorted(known_set, key=_shortlex)[:MAX_KNOWN]
        foreign = sorted((e for e in set(shared) if e not in known_set), key=_shortlex)
        replayed = foreign[:MAX_FOREIGN] if not known else []
        self.note = ReplayNote(known=len(known), foreign=len(replayed),
                               ignored=len(foreign) - len(replayed),
                               damaged=len(sealed) - len(known_set),
                               more=more or more_known)
        return known + replayed

    def save(self, key: bytes, value: bytes) -> None:
        self.saved_keys.add(key)
        self.inner.save(self._prefix + key, value)
        if not key.endswith(_SUB_KEYS):
            self.inner.save(self._known + key, _seal(value))
            self.inner.save(INDEX_KEY, _seal(self.namespace.encode()))

    def kept(self) -> bool | None:
        """Whether what was saved through this database can be read back: ``None`` when
        nothing was saved, ``False`` when the saves were lost (Hypothesis ignores a failed
        write).  Only the keys Hypothesis replays first count, not its ``.secondary`` or
        ``.pareto`` ones."""
        keys = [k for k in self.saved_keys if not k.endswith((b".secondary", b".pareto"))]
        if not keys:
            return None
        return any(next(iter(self.fetch(key)), None) is not None for key in keys)

    def delete(self, key: bytes, value: bytes) -> None:
        self.inner.delete(self._prefix + key, value)
        if not key.endswith(_SUB_KEYS):
            self.inner.delete(self._known + key, _seal(value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self.inner.move(self._prefix + src, self._prefix + dest, value)
        if not src.endswith(_SUB_KEYS):
            self.inner.delete(self._known + src, _seal(value))
        if not dest.endswith(_SUB_KEYS):
            self.inner.save(self._known + dest, _seal(value))


class GuardedDirectoryDatabase(DirectoryBasedExampleDatabase):
    """Hypothesis's directory database, whose entries are read without following links
    and with a size bound: a link, a device, a FIFO, a folder or a file over
    :data:`MAX_FILE_BYTES` among a key's entries is skipped, and ``notice`` (set on the
    first one, for the runner to report once) names it and the fix."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        super().__init__(path)
        self.notice: str | None = None
        self.skipped = 0

    def __repr__(self) -> str:
        return f"GuardedDirectoryDatabase({str(self.path)!r})"

    def _skip(self, where: Path, why: str) -> None:
        self.skipped += 1
        if self.notice is None:
            self.notice = (
                f"skipped the example-database entry {str(where)!r} ({why}): Hypothesis "
                "writes each entry as a small regular file, so this one is not an example; "
                "delete it (the run reads no link, device, FIFO or file over "
                f"{MAX_FILE_BYTES:,} bytes there)")

    def fetch(self, key: bytes) -> Iterable[bytes]:
        folder = Path(self.path) / hashlib.sha384(key).hexdigest()[:16]
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        try:
            dir_fd = os.open(folder, flags | os.O_DIRECTORY)
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                self._skip(folder, "a symbolic link or a file where a folder belongs")
            return
        try:
            names = os.listdir(dir_fd)
        except OSError:
            os.close(dir_fd)
            return
        try:
            for name in names:
                value = self._read_entry(dir_fd, folder / name, name, flags)
                if value is not None:
                    yield value
        finally:
            os.close(dir_fd)

    def _read_entry(self, dir_fd: int, where: Path, name: str, flags: int) -> bytes | None:
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._skip(where, "a symbolic link")
            return None  # gone since listed, or unreadable: as Hypothesis does
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                self._skip(where, "not a regular file")
                return None
            if info.st_size > MAX_FILE_BYTES:
                self._skip(where, f"{info.st_size:,} bytes")
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:  # grew since fstat
                self._skip(where, f"over {MAX_FILE_BYTES:,} bytes")
                return None
            return data
        except OSError:
            return None
        finally:
            os.close(fd)


class FallbackDatabase(ExampleDatabase):
    """``primary`` (a shared, remote database) until it fails once, then ``local`` for good.

    ``notice`` says what happened, for the runner to report once; ``errors`` are the
    exception types that mean "the primary is gone" (anything else is a bug and raises).
    """

    def __init__(self, primary: ExampleDatabase, local: ExampleDatabase, *, label: str,
                 local_label: str, errors: tuple[type[BaseException], ...]) -> None:
        super().__init__()
        self.primary = primary
        self.local = local
        self.label = label
        self.local_label = local_label
        self.errors = errors
        self.notice: str | None = None

    def __repr__(self) -> str:
        return f"FallbackDatabase({self.primary!r}, {self.local!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, FallbackDatabase) and other.primary == self.primary
                and other.local == self.local)

    def __hash__(self) -> int:
        return hash((id(self.primary), id(self.local)))

    @property
    def failed_over(self) -> bool:
        return self.notice is not None

    def _call(self, method: Callable[[ExampleDatabase], Any]) -> Any:
        if self.notice is None:
            try:
                return method(self.primary)
            except self.errors as exc:
                self.notice = (
                    f"the example database {self.label} stopped answering "
                    f"({type(exc).__name__}: {redact(str(exc))}); the run goes on with the "
                    f"local database {self.local_label}, so failures found from now on are "
                    "kept there, not shared"
                )
        return method(self.local)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        # Redis's fetch is a generator: materialise it so errors surface here
        return list(self._call(lambda db: list(db.fetch(key))))

    def save(self, key: bytes, value: bytes) -> None:
        self._call(lambda db: db.save(key, value))

    def delete(self, key: bytes, value: bytes) -> None:
        self._call(lambda db: db.delete(key, value))

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        self._call(lambda db: db.move(src, dest, value))


def _unnamespaced(db: ExampleDatabase) -> ExampleDatabase:
    """The shared database under a unit's view of it: where :data:`INDEX_KEY` lives."""
    return db.inner if isinstance(db, NamespacedDatabase) else db


def units_with_failures(db: ExampleDatabase | None, ids: Iterable[str]) -> set[str]:
    """The unit ids among ``ids`` that saved a failure in ``db`` (see :data:`INDEX_KEY`).

    The database is a cache (Hypothesis's docs, "The Hypothesis example database"): an
    entry another tool, another version or a truncated copy left under the index key is
    skipped, and a database that cannot be read lists nothing, so a shard then replays
    only its own units' failures (as every unit's run does first) and never crashes.
    """
    if db is None:
        return set()
    inner = _unnamespaced(db)
    wanted = set(ids)
    try:
        entries = list(itertools.islice(inner.fetch(INDEX_KEY), MAX_READ))
    except Exception:  # an unreadable cache lists nothing; the run goes on
        return set()
    found: set[str] = set()
    for entry in entries:
        value = _unseal(entry) if isinstance(entry, bytes) else None
        if value is None:
            continue
        try:
            unit_id = value.decode()
        except UnicodeDecodeError:
            continue
        if unit_id in wanted:
            found.add(unit_id)
    return found


def forget_failing_unit(db: ExampleDatabase | None, unit_id: str) -> None:
    """Drop ``unit_id`` from the index of failing units (:data:`INDEX_KEY`): a replay of
    it found nothing saved any more (fixed: a passing replay deletes the example; or
    deleted), so no shard should keep it for replay night after night.  A database that
    cannot be written keeps the entry; the next replay tries again."""
    if db is None:
        return
    with contextlib.suppress(Exception):  # a cache: never the reason a run fails
        _unnamespaced(db).delete(INDEX_KEY, _seal(unit_id.encode()))


def namespaced(db: ExampleDatabase, namespace: str) -> NamespacedDatabase:
    """Return ``db`` seen through the key prefix ``namespace`` (a unit id); ``db`` itself
    when it already is (so the runner can ask it afterwards what was saved)."""
    if isinstance(db, NamespacedDatabase):
        if db.namespace == namespace:
            return db
        db = db.inner
    return NamespacedDatabase(db, namespace)


_PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def project_home(config: str | Path | None = None, start: str | Path | None = None) -> Path:
    """The folder compatfuzz keeps its files in (``.hypothesis/``, counterexamples).

    The config file's folder when there is one; else the nearest folder from ``start``
    (default: the working directory) upwards holding a ``pyproject.toml``, ``setup.cfg``,
    ``setup.py`` or ``.git``; else ``start``.  Running from a subfolder therefore uses the
    same example database as running from the project root, and as pytest.
    """
    if config:
        return Path(config).resolve().parent
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            return folder
    return here


def default_database_path(home: Path) -> Path:
    """``home/.hypothesis/examples``, unless ``HYPOTHESIS_STORAGE_DIRECTORY`` says where
    Hypothesis keeps its files (then its ``examples`` folder, as Hypothesis's own)."""
    where = os.getenv("HYPOTHESIS_STORAGE_DIRECTORY")
    return Path(where) / "examples" if where else home / ".hypothesis" / "examples"


def is_hypothesis_default(db: Any) -> bool:
    """Whether ``db`` is Hypothesis's own default (``.hypothesis/examples`` under the
    working directory when Hypothesis was imported), which compatfuzz moves to the
    project's folder; a database a user's profile chose stays."""
    path = getattr(db, "path", None)
    return (isinstance(db, DirectoryBasedExampleDatabase) and path is not None
            and Path(path).parts[-2:] == (".hypothesis", "examples")
            and not os.getenv("HYPOTHESIS_STORAGE_DIRECTORY"))


_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^:/?#@\s]*):[^@/?#\s]*@")
_QUERY_SECRET = re.compile(r"(?P<head>[?&](?:password|passwd|pass|pwd|token)=)[^&#\s]*",
                           re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with the password of every URL in it replaced by ``***``.

    ``redis://:secret@host/0`` and ``redis://user:secret@host/0`` keep their user and
    lose the password; ``?password=secret`` (which redis-py also reads, see
    ``redis/connection.py::parse_url``) too.  The database spec is shown in the run
    header and stored in report.json and the HTML page: it is redacted where it becomes
    text, so no output can carry the secret.
    """
    text = _USERINFO.sub(lambda m: f"{m['head']}:***@", text)
    return _QUERY_SECRET.sub(lambda m: f"{m['head']}***", text)


def open_database(spec: str | None, *, home: Path | None = None) -> ExampleDatabase | None:
    """Return the database ``spec`` names: a directory, ``redis://...``, ``:memory:``, ``none``.

    ``""`` is ``home/.hypothesis/examples`` (see :func:`project_home`), or Hypothesis's
    default database when ``home`` is ``None``.

    Raises:
        InvalidArgument: a ``redis://`` URL without the ``redis`` package installed, or
            an unusable URL, or a Redis server that does not answer.
    """
    if spec is None or spec == "":
        # The plugin uses the same folder, and both follow HYPOTHESIS_STORAGE_DIRECTORY,
        # so the CLI and pytest replay each other's failures.
        if home is not None:
            return GuardedDirectoryDatabase(default_database_path(home))
        default = settings.get_profile("default").database
        if type(default) is DirectoryBasedExampleDatabase:
            return GuardedDirectoryDatabase(default.path)
        return default
    if spec.lower() == "none":
        return None
    if spec == ":memory:":
        return InMemoryExampleDatabase()
    if spec.startswith(("redis://", "rediss://", "unix://")):
        try:
            import redis
        except ModuleNotFoundError:
            raise InvalidArgument(
                f"--database {redact(spec)!r} needs the 'redis' package; "
                "pip install 'compatfuzz[redis]'"
            ) from None
        from hypothesis.extra.redis import RedisExampleDatabase

        try:
            client = redis.Redis.from_url(spec)
        except ValueError as exc:
            raise InvalidArgument(
                f"Expected a URL like redis://localhost:6379/0 but got --database "
                f"{redact(spec)!r} ({redact(str(exc))})"
            ) from None
        try:
            client.ping()  # one clear error now, not one ERROR per unit later
        except redis.exceptions.RedisError as exc:
            raise InvalidArgument(
                f"cannot reach the Redis example database --database {redact(spec)!r} "
                f"({redact(str(exc))}); "
                "start redis-server there, or pass a directory"
            ) from None
        local = open_database("", home=home) or InMemoryExampleDatabase()
        return FallbackDatabase(
            RedisExampleDatabase(client, key_prefix=b"compatfuzz:"), local,
            label=redact(spec),
            local_label=database_label("", home=home),
            errors=(redis.exceptions.RedisError, OSError),
        )
    return GuardedDirectoryDatabase(Path(spec))


def database_label(spec: str, *, home: Path | None = None) -> str:
    """How the run header names the database ``spec`` opens (a path relative to cwd)."""
    if spec.lower() == "none":
        return "none"
    if spec:
        return redact(spec)
    path = (default_database_path(home) if home is not None else
            getattr(settings.get_profile("default").database, "path", None))
    if path is None:
        return "hypothesis default"
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative
