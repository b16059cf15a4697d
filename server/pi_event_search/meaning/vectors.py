"""The vectors of texts already read, remembered by this process and in a file every process
shares, so that no text is read by the model twice: an event's text never changes, so neither does
its vector, whichever process, index or session asks (a fork's copy included).

The file (`meaning-v1.sqlite3` beside the index, in the cache directory) is a cache like the index:
keyed by a digest of the text, written by any process in its own short transaction (WAL; a busy or
read-only file is passed over: the vector is computed again next time), at most CAP vectors (the
oldest go first). It holds vectors and digests, never text.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_event_search.meaning import minilm

if TYPE_CHECKING:
    from numpy.typing import NDArray

CACHED = 20_000  # vectors kept in this process (768 bytes each)
CAP = 200_000  # vectors kept in the file (about 170 MB)
FILE = "meaning-v1.sqlite3"
_SCHEMA = """CREATE TABLE IF NOT EXISTS vectors (
  id INTEGER PRIMARY KEY, digest BLOB NOT NULL UNIQUE, v BLOB NOT NULL)"""


class Vectors:
    def __init__(self) -> None:
        self.known: OrderedDict[bytes, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.files: dict[Path, sqlite3.Connection | None] = {}
        self.added = 0

    def of(self, model: minilm.Model, texts: list[str], tokens: int, beside: Path | None
           ) -> NDArray[Any]:
        """One unit vector per text (float32 rows), from memory, the file beside `beside` (an
        index path; None: none), or the model."""
        import numpy as np

        keys = [hashlib.blake2b(f"{tokens}\0{t}".encode("utf-8", "surrogatepass"),
                                digest_size=16).digest() for t in texts]
        with self.lock:
            found = {k: self.known[k] for k in keys if k in self.known}
            db = self._file(beside) if beside is not None else None
            missing = [k for k in dict.fromkeys(keys) if k not in found]
            if db is not None and missing:
                with contextlib.suppress(sqlite3.Error):
                    for at in range(0, len(missing), 500):
                        chunk = missing[at:at + 500]
                        for r in db.execute(
                                "SELECT digest, v FROM vectors WHERE digest IN "
                                f"({','.join('?' * len(chunk))})", chunk):
                            found[r["digest"]] = self._remember(
                                r["digest"], np.frombuffer(r["v"], np.float16))
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # one reading per text
        wanted = [i for k, i in first.items() if k not in found]
        if wanted:
            new = model.embed([texts[i] for i in wanted], tokens).astype(np.float16)
            with self.lock:
                rows = []
                for row, i in enumerate(wanted):
                    found[keys[i]] = self._remember(keys[i], new[row])
                    rows.append((keys[i], new[row].tobytes()))
                if db is not None:
                    self._store(db, rows)
        return np.stack([found[k] for k in keys]).astype(np.float32)

    def _remember(self, key: bytes, v: Any) -> Any:
        self.known[key] = v
        self.known.move_to_end(key)
        while len(self.known) > CACHED:
            self.known.popitem(last=False)
        return v

    def _file(self, index: Path) -> sqlite3.Connection | None:
        where = index.with_name(FILE)
        if where not in self.files:
            try:
                db = sqlite3.connect(where, timeout=0.05, check_same_thread=False,
                                     isolation_level=None)
                db.row_factory = sqlite3.Row
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(_SCHEMA)
                self.files[where] = db
            except sqlite3.Error:  # read-only, unwritable, damaged: this process remembers alone
                self.files[where] = None
        return self.files[where]

    def _store(self, db: sqlite3.Connection, rows: list[tuple[bytes, bytes]]) -> None:
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR IGNORE INTO vectors(digest, v) VALUES (?, ?)", rows)
            self.added += len(rows)
            if self.added >= 1000:
                self.added = 0
                db.execute("DELETE FROM vectors WHERE id <= (SELECT max(id) FROM vectors) - ?",
                           (CAP,))
            db.execute("COMMIT")
        except sqlite3.Error:  # busy (another process stores) or read-only: a cache, passed over
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")


vectors = Vectors()
