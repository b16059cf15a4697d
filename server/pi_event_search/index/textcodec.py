"""How fragment text is stored: zstd frames, with a dictionary trained on the index's own text.

Short texts stay plain. Longer ones are zstd frames at level 3; once an index holds a dictionary
(trained at its first bulk load from a sample of the sessions being loaded; measured in
`bench/report/history.py --area cold-index`), frames use it and name it (the frame header carries its
id), so every stored text stays readable whichever dictionary was current when it was written.
On the bench's text this is 4 times faster than zlib at level 4 and 20% smaller; on source code
and documentation, 15% smaller.

zstd's contexts are not thread-safe: each thread gets its own, per dictionary.
"""

from __future__ import annotations

import codecs
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import zstandard

LEVEL = 3
PACK_MIN = 256  # shorter texts stay plain: compressing them saves little and costs a call each
DICT_BYTES = 112_640  # zstd's default dictionary size
SAMPLES = 1000  # texts a dictionary is trained on...
SAMPLE_CHARS = 8192  # ... each cut to this many characters

_DICTS: dict[int, zstandard.ZstdCompressionDict] = {}  # dictionary id -> dictionary
_local = threading.local()


class MissingDictionary(Exception):
    """A stored text names a dictionary its index does not hold (the index is damaged)."""


class Packer:
    """Compresses fragment text for one index, with its current dictionary (0: none)."""

    def __init__(self, dict_id: int) -> None:
        self.dict_id = dict_id

    def pack(self, text: str, utf8: bytes | None = None) -> str | bytes:
        """`utf8`: the text's UTF-8 (surrogates kept), when the caller has it."""
        if len(text) < PACK_MIN:
            return text
        return _compressor(self.dict_id).compress(
            text.encode("utf-8", "surrogatepass") if utf8 is None else utf8)


PLAIN = Packer(0)


def _compressor(dict_id: int) -> zstandard.ZstdCompressor:
    return _cached("c", dict_id, lambda d: zstandard.ZstdCompressor(
        level=LEVEL, dict_data=d, write_checksum=False))


def _decompressor(dict_id: int) -> zstandard.ZstdDecompressor:
    return _cached("d", dict_id, lambda d: zstandard.ZstdDecompressor(dict_data=d))


_T = TypeVar("_T")


def _cached(kind: str, dict_id: int,
            make: Callable[[zstandard.ZstdCompressionDict | None], _T]) -> _T:
    """This thread's context of `kind` for a dictionary (0: none)."""
    cache: dict[int, _T] = _local.__dict__.setdefault(kind, {})
    ctx = cache.get(dict_id)
    if ctx is None:
        ctx = cache[dict_id] = make(_DICTS.get(dict_id) if dict_id else None)
    return ctx


def unpack(stored: str | bytes, conn: sqlite3.Connection | None = None) -> str:
    """The text as it was packed (`conn`: where to find a dictionary this process lacks)."""
    if isinstance(stored, str):
        return stored
    data = _decompressor(_dictionary_of(stored, conn)).decompress(stored)
    return data.decode("utf-8", "surrogatepass")


def chunks(stored: bytes, size: int, conn: sqlite3.Connection | None = None) -> Iterator[str]:
    """The text, decompressed `size` bytes at a time (a snippet often needs only the start)."""
    dctx = _decompressor(_dictionary_of(stored, conn))
    decode = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    with dctx.stream_reader(stored) as reader:
        while data := reader.read(size):
            yield decode.decode(data)
    yield decode.decode(b"", final=True)


def _dictionary_of(stored: bytes, conn: sqlite3.Connection | None) -> int:
    dict_id: int = zstandard.get_frame_parameters(stored).dict_id
    if dict_id and dict_id not in _DICTS and (conn is None or not load(conn, dict_id)):
        raise MissingDictionary(f"stored text needs zstd dictionary {dict_id}")
    return dict_id


def load(conn: sqlite3.Connection, dict_id: int | None = None) -> bool:
    """Make the index's dictionaries known to this process (one, or all)."""
    sql, args = "SELECT id, data FROM dictionary", []
    if dict_id is not None:
        sql, args = sql + " WHERE id = ?", [dict_id]
    found = False
    for row in conn.execute(sql, args).fetchall():
        _DICTS.setdefault(int(row["id"]), zstandard.ZstdCompressionDict(row["data"]))
        found = True
    return found


def packer(conn: sqlite3.Connection) -> Packer:
    """The packer for this index's current dictionary."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'dictionary'").fetchone()
    if row is None:
        return PLAIN
    dict_id = int(row["value"])
    if dict_id not in _DICTS and not load(conn, dict_id):
        return PLAIN
    return Packer(dict_id)


def train(conn: sqlite3.Connection, texts: Iterable[str]) -> Packer:
    """Train a dictionary on `texts` and make it the index's current one (inside the caller's
    write transaction); too few texts to train on leave the index as it was."""
    samples: list[bytes | bytearray | memoryview] = []
    samples += (t[:SAMPLE_CHARS].encode("utf-8", "surrogatepass") for t in texts
                if len(t) >= PACK_MIN)
    del samples[SAMPLES:]
    try:
        trained = zstandard.train_dictionary(DICT_BYTES, samples, level=LEVEL)
    except zstandard.ZstdError:
        return packer(conn)
    dict_id = trained.dict_id()
    conn.execute("INSERT OR REPLACE INTO dictionary (id, data) VALUES (?, ?)",
                 (dict_id, trained.as_bytes()))
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('dictionary', ?)",
                 (str(dict_id),))
    _DICTS.setdefault(dict_id, trained)
    return Packer(dict_id)
