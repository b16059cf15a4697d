"""The SQLite index: schema, opening rules, the generation counter and the write batch. (The rows
themselves are written by the modules that own them: ingest, sessions, indexer.)

The index is a disposable cache: a schema-version mismatch drops and rebuilds it; a database that
is not ours (different application_id) is refused, never touched.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import quote

from pi_event_search.index import locks, memo, textcodec

APPLICATION_ID = 0x50494553  # "PIES"
# 11: objects on a line Pi cannot load no longer take part in the tree (their states are unknown):
# indexes written by 10 hold other states for those sessions, so they are rebuilt under a new name.
# 12: texts are stored with credentials masked (core/secrets.py) and events count them (`secrets`):
# an index of 11 holds the values themselves.
# 13: the full-text table has a third column, `parts`: the parts of the text's mixed-case
# identifiers (fulltext.identifier_parts), which an index of 12 lacks; Pi 1.x's context edits and
# system messages change selection states (`edited-out`), and system, usage and context_edit
# entries are typed events: an index of 12 has neither.
# 14: wider masking rules (issue 38: values with a sigil, `;` or brackets, all capitals, short
# Basic credentials, known shapes after any trigger): an index of 13 holds values they now mask.
# 15: sessions say which agent wrote them (`source`: Oh My Pi's files read past their title record,
# their entry types projected, their states as Oh My Pi replays them): an index of 14 has none.
# 16: masking of issue 47 (`://:pass@`, `_PASS=`, `SECRET_KEY_BASE=`, escaped JSON, unpadded Basic)
# and of file paths and tool names in their tables; `cwd_canon` a path key by the platform's rules
# (core/paths.py: a Windows cwd has one, a macOS one is case-folded, the place tokens follow).
SCHEMA_VERSION = 16

# The full-text table; a bulk load builds a copy of it in a side database (ftsload.py).
FTS_TABLE = ("CREATE VIRTUAL TABLE {name} USING fts5(text, meta, parts, content='',\n"
             "  tokenize='unicode61 remove_diacritics 2');")

SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
  path TEXT PRIMARY KEY, root TEXT NOT NULL, live INTEGER NOT NULL,
  dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER,
  session_id TEXT, status TEXT NOT NULL, reason TEXT, canonical_path TEXT,
  committed INTEGER NOT NULL DEFAULT 0, lines INTEGER NOT NULL DEFAULT 0,
  header_hash BLOB, last_off INTEGER, last_hash BLOB,
  bad_lines INTEGER NOT NULL DEFAULT 0, bad_detail TEXT);
CREATE TABLE sessions (
  sid INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
  cwd TEXT, cwd_canon TEXT, version INTEGER, created TEXT, parent_path TEXT, name TEXT,
  leaf TEXT, entries INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT 'ok', error TEXT,
  source TEXT NOT NULL DEFAULT 'pi');
CREATE INDEX sessions_cwd ON sessions(cwd_canon);
CREATE INDEX sessions_parent ON sessions(parent_path);
CREATE INDEX sessions_path ON sessions(path);
CREATE TABLE events (
  eid INTEGER PRIMARY KEY, sid INTEGER NOT NULL, entry_id TEXT NOT NULL, parent_id TEXT,
  seq INTEGER NOT NULL, line INTEGER NOT NULL, byte_off INTEGER NOT NULL, sub INTEGER NOT NULL,
  lhash BLOB NOT NULL, entry_type TEXT NOT NULL, role TEXT, tool_name TEXT, ts TEXT, ts_ms INTEGER,
  is_error INTEGER NOT NULL DEFAULT 0, context_role TEXT NOT NULL, branch_state TEXT NOT NULL,
  selection_state TEXT NOT NULL, preview TEXT NOT NULL, kinds TEXT NOT NULL, facts TEXT,
  secrets TEXT, UNIQUE (sid, entry_id));
CREATE INDEX events_seq ON events(sid, seq);
CREATE INDEX events_parent ON events(sid, parent_id);
CREATE INDEX events_ts ON events(ts_ms);
CREATE INDEX events_secrets ON events(sid, seq) WHERE secrets IS NOT NULL;
CREATE TABLE fragments (
  fid INTEGER PRIMARY KEY, eid INTEGER NOT NULL, frag TEXT NOT NULL, kind TEXT NOT NULL,
  text NOT NULL, meta TEXT NOT NULL);
CREATE INDEX fragments_eid ON fragments(eid);
{FTS_TABLE.format(name="fts")}
CREATE TABLE relations (eid INTEGER NOT NULL, type TEXT NOT NULL, target TEXT NOT NULL);
CREATE INDEX relations_eid ON relations(eid);
CREATE INDEX relations_target ON relations(target, type);
CREATE TABLE calls (sid INTEGER NOT NULL, call_id TEXT NOT NULL, eid INTEGER NOT NULL);
CREATE INDEX calls_id ON calls(sid, call_id);
CREATE INDEX calls_eid ON calls(eid);
CREATE TABLE dictionary (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE file_refs (eid INTEGER NOT NULL, op TEXT NOT NULL, path TEXT NOT NULL,
  label TEXT NOT NULL);
CREATE INDEX file_refs_path ON file_refs(path);
CREATE INDEX file_refs_eid ON file_refs(eid);
INSERT INTO meta(key, value) VALUES ('generation', '0');
INSERT INTO meta(key, value) VALUES ('indexing', '{{"phase":"first-index","done":0,"total":0}}');
"""


def _sql_unpack(stored: str | bytes | None) -> str | None:
    return None if stored is None else textcodec.unpack(stored)


class ForeignDatabase(Exception):
    """The index path holds a SQLite database that pi-event-search did not create."""


OPEN_WAIT = 5.0  # seconds a process waits for another one that is creating the schema


class OldSchema(Exception):
    """The index holds our own older schema: the holder of the writer lease rebuilds it."""


class IndexBusy(Exception):
    """Another process is creating the index's schema (or holds it too long): retry later."""


def connect(path: Path, *, readonly: bool = False, rebuild: bool = True,
            immutable: bool = False) -> sqlite3.Connection:
    """Open (and if needed create or rebuild) the index. Autocommit mode: callers BEGIN.
    Read-only connections are opened with mode=ro: they never create the file, never write.
    `immutable`: read-only, and SQLite takes no lock and opens no -wal or -shm (a process that
    may not write beside the index, when none is there: engine.py).
    `rebuild=False`: an index of our older schema raises OldSchema instead of being dropped
    (only the holder of the writer lease rebuilds: another process may be writing it)."""
    if readonly:
        conn = _open(f"file:{quote(str(path))}?mode=ro{'&immutable=1' if immutable else ''}")
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _create_private(path)
        conn = _open(f"file:{quote(str(path))}?mode=rw")
        try:
            if not _ready(conn):
                _create(conn, path, rebuild)
        except BaseException:
            conn.close()
            raise
    if _ours_and_current(conn):
        textcodec.load(conn)
    return conn


def _create_private(path: Path) -> None:
    """Create the index file readable by the user only (it holds copies of session text), and
    never open an existing one here: closing any descriptor of a file drops every POSIX lock this
    process holds on it, the shared locks of its SQLite readers included. Another process could
    then take the exclusive lock, checkpoint and delete the WAL under those readers, which went
    on reading the deleted one (a server whose client turned watching off never saw another
    server's commits again)."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def _open(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None,
                           check_same_thread=False, factory=memo.Connection)
    # Every query's columns are read by name: adding or reordering a column shifts nothing.
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 60000")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA cache_size = -32000")
    conn.create_function("fragment_text", 1, _sql_unpack, deterministic=True)
    return conn


def _ready(conn: sqlite3.Connection) -> bool:
    wal = conn.execute("PRAGMA journal_mode").fetchone()["journal_mode"] == "wal"
    return wal and _ours_and_current(conn)


def _create(conn: sqlite3.Connection, path: Path, rebuild: bool = True) -> None:
    """WAL and the schema, one process at a time (a lock file beside the index): SQLite does not
    wait on its busy handler for a journal-mode change, and two creators at once got "database
    is locked" (issue 26: 11 of 300 concurrent opens). A creator killed half-way leaves no
    schema (DDL is transactional): the next one starts again."""
    fd = locks.wait_lock(Path(f"{path}.open.lock"), OPEN_WAIT, f"creating the index {path}")
    try:
        if conn.execute("PRAGMA page_count").fetchone()["page_count"] == 0:
            # Only a new file can switch, and before WAL (later, only VACUUM could): pages freed
            # by a bulk load's final merge go back to the file system instead of staying there.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        _set_wal(conn, path)
        _ensure_schema(conn, path, rebuild)
    finally:
        locks.unlock(fd)


def _set_wal(conn: sqlite3.Connection, path: Path) -> None:
    """journal_mode = WAL, retried while a reader's shared lock is in the way (bounded)."""
    end = time.monotonic() + OPEN_WAIT
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() >= end:
                raise IndexBusy(f"cannot switch {path} to WAL: {exc}") from exc
            time.sleep(0.02)


def _ensure_schema(conn: sqlite3.Connection, path: Path, rebuild: bool) -> None:
    if _ours_and_current(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _ours_and_current(conn):
            conn.execute("COMMIT")
            return
        app_id = conn.execute("PRAGMA application_id").fetchone()["application_id"]
        tables = [r["name"] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table','view') "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'fts_%'")]
        if app_id != APPLICATION_ID and tables:
            raise ForeignDatabase(f"{path} is not a pi-event-search index; refusing to touch it")
        version = conn.execute("PRAGMA user_version").fetchone()["user_version"]
        if tables and version > SCHEMA_VERSION:
            raise ForeignDatabase(
                f"{path} was written by a newer pi-event-search (schema {version}, this one "
                f"reads {SCHEMA_VERSION}); leaving it as it is: upgrade, or use another index path")
        if tables and not rebuild:
            raise OldSchema(f"{path} holds an older schema ({version}): rebuilt by the writer")
        for name in tables:  # our own older schema: the index is disposable, rebuild it
            conn.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in _statements(SCHEMA):
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a failed COMMIT (a full disk) rolled back already
            conn.execute("ROLLBACK")
        raise


def current(conn: sqlite3.Connection) -> bool:
    """Whether `conn` holds an index of this schema version (else it needs creating or
    rebuilding)."""
    return _ours_and_current(conn)


def _ours_and_current(conn: sqlite3.Connection) -> bool:
    app_id = conn.execute("PRAGMA application_id").fetchone()["application_id"]
    version = conn.execute("PRAGMA user_version").fetchone()["user_version"]
    return bool(app_id == APPLICATION_ID and version == SCHEMA_VERSION)


def _statements(script: str) -> list[str]:
    """Split the schema into statements, each one complete as SQLite sees it."""
    out: list[str] = []
    buf = ""
    for line in script.strip().splitlines():
        buf += line + "\n"
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


def generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row["value"]) if row else 0


def bump_generation(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")


def begin(conn: sqlite3.Connection) -> None:
    """Begin a write transaction, taking SQLite's write lock up front (BEGIN IMMEDIATE: no
    upgrade deadlocks), then run the connection's guard inside it: the writer lease checks there
    that it is still this process's (service/lease.py), and nothing is written if it is not."""
    conn.execute("BEGIN IMMEDIATE")
    guard = getattr(conn, "guard", None)
    if guard is not None:
        try:
            guard(conn)
        except BaseException:
            conn.execute("ROLLBACK")
            raise


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction (begin) committed at the end, rolled back on any error."""
    begin(conn)
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def remove_older_versions(current: Path) -> None:
    """Older schema versions' default index files, each only when no process uses it (every
    engine holds a shared lock on `<index>.users` while it is open)."""
    for old in current.parent.glob("index-v*.sqlite3"):
        version = old.name[len("index-v"):-len(".sqlite3")]
        if old == current or not version.isdigit() or int(version) >= SCHEMA_VERSION:
            continue
        users = locks.try_lock(Path(f"{old}.users"))
        if users is None:
            continue
        try:
            for extra in ("", "-wal", "-shm", ".open.lock", ".writer", ".writer.cas"):
                Path(f"{old}{extra}").unlink(missing_ok=True)
            for side in old.parent.glob(f"{old.name}.fts-load*"):  # a bulk load's side files
                side.unlink(missing_ok=True)
            shutil.rmtree(f"{old}.dirs", ignore_errors=True)  # wanted.py
        finally:
            Path(f"{old}.users").unlink(missing_ok=True)
            locks.unlock(users)
