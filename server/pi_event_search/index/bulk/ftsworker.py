"""The process that writes a bulk load's full-text rows into the side database (ftsload.py).

A process, not a thread: FTS5 tokenizing is C, but binding each row takes the GIL, and in a
thread beside the parser and the writer it waited for the GIL for a third of the load.

    python -m pi_event_search.index.bulk.ftsworker SIDE_DB   (frames on stdin; "ok CPU" on stdout at the end)

Frames: one byte (I insert, D delete, C commit, R rollback, E end), a 4-byte big-endian length,
then for I and D a pickle of (fid, text, meta) rows. The parent is our own process, so pickle is
safe here. End of input before E means the parent is gone: the side database is left unfinished
(the next load deletes it).
"""

from __future__ import annotations

import pickle
import sqlite3
import struct
import sys
import time
from typing import Any, BinaryIO

from pi_event_search.index import fulltext, store  # the main index's table and its rows
from pi_event_search.index.bulk import mode  # and its bulk load's settings

HEADER = struct.Struct("!cI")
INSERT, DELETE, COMMIT, ROLLBACK, END = b"I", b"D", b"C", b"R", b"E"
_SQL = {INSERT: fulltext.INSERT_SQL, DELETE: fulltext.DELETE_SQL}


def frame(op: bytes, rows: list[tuple[Any, ...]] | None = None) -> bytes:
    payload = b"" if rows is None else pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(op, len(payload)) + payload


def serve(side: sqlite3.Connection, inp: BinaryIO, table_sql: str, hash_bytes: int) -> bool:
    """Apply frames until E (True) or the end of input (False)."""
    side.execute("PRAGMA journal_mode = TRUNCATE")  # rollbacks; memory stays small (a MEMORY
    # journal held 120 MB at 1.1 GB); no durability needed: synchronous off
    side.execute("PRAGMA synchronous = OFF")
    side.execute("PRAGMA cache_size = -16000")
    side.execute(table_sql)
    side.execute("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)")
    side.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (hash_bytes,))
    while True:
        head = inp.read(HEADER.size)
        if len(head) < HEADER.size:
            return False
        op, size = HEADER.unpack(head)
        payload = inp.read(size)
        if len(payload) < size:
            return False
        if op == END:
            break
        if op in (COMMIT, ROLLBACK):
            if side.in_transaction:
                side.execute("COMMIT" if op == COMMIT else "ROLLBACK")
            continue
        if not side.in_transaction:
            side.execute("BEGIN")
        side.executemany(_SQL[op], fulltext.with_parts(pickle.loads(payload)))
    if side.in_transaction:
        side.execute("ROLLBACK")  # rows the writer never committed
    # The merge rewrites the whole index in one transaction: no rollback journal for it (it held
    # the merged pages in memory, 190 MB at 1.1 GB); should it fail, the side file is dropped.
    side.execute("PRAGMA journal_mode = OFF")
    side.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    return True


def main(argv: list[str]) -> int:
    side = sqlite3.connect(argv[1], isolation_level=None)
    try:
        finished = serve(side, sys.stdin.buffer, store.FTS_TABLE.format(name="fts"),
                         mode.BULK_FTS_HASH)
    finally:
        side.close()
    if not finished:
        return 1
    sys.stdout.write(f"ok {time.process_time():.3f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
