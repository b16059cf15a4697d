"""What an index holds, as one digest per table: to show that a change to the indexer left every
row as it was (a cold index of the same corpus before and after; docs/benchmarks.md).

    python -m bench.speed.indexdigest INDEX                 # table: rows, sha256 of its rows
    python -m bench.speed.indexdigest INDEX_A INDEX_B       # the same, and which tables differ

Rows are read in primary-key order (rowid; a table without one by all its columns) and hashed
with their types, so a text and the same bytes as a blob differ. The full-text index is compared
by what it holds, every term of every row with its column and position (fts5vocab `instance`),
plus its document sizes, totals and settings as stored. Its segment pages are not: they are
numbered by how many segments the load wrote before the final merge, which follows the speed of
the load (each commit flushes FTS5's pending terms). Left out: the meta keys that say when and
by whom (generation, the writer lease, when a directory was last listed), which differ between
any two runs.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys

VOLATILE_META = ("generation", "lease")
VOLATILE_META_PREFIXES = ("dir_seen:",)


def _order(conn: sqlite3.Connection, table: str) -> str:
    cols = [r[1].decode() for r in conn.execute(f"PRAGMA table_info({table})")]
    without_rowid = conn.execute(
        "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    if without_rowid and without_rowid[0]:
        return ", ".join(cols)
    return "rowid"


def digests(path: str) -> dict[str, tuple[int, str]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.text_factory = bytes
    tables = [r[0].decode() for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
        "AND name NOT IN ('fts_data', 'fts_idx') ORDER BY name")]
    queries = {t: f"SELECT * FROM {t} ORDER BY {_order(conn, t)}" for t in tables}
    conn.execute("CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, fts, instance)")
    queries["fts terms"] = "SELECT term, doc, col, offset FROM temp.fts_instances"
    queries["fts totals"] = "SELECT block FROM fts_data WHERE id = 1"
    out = {}
    for table, sql in sorted(queries.items()):
        h = hashlib.sha256()
        n = 0
        for row in conn.execute(sql):
            if table == "meta":
                key = row[0].decode()
                if key in VOLATILE_META or key.startswith(VOLATILE_META_PREFIXES):
                    continue
            h.update(repr([(type(v).__name__, v) for v in row]).encode())
            n += 1
        out[table] = (n, h.hexdigest()[:16])
    conn.close()
    return out


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    runs = [digests(p) for p in argv[1:]]
    differ = []
    for table in sorted(set().union(*runs)):
        cells = [r.get(table, (0, "-")) for r in runs]
        same = len(runs) == 1 or cells[0] == cells[1]
        if not same:
            differ.append(table)
        print(f"{table:14} " + "  ".join(f"{n:>9} {h}" for n, h in cells) + ("" if same else "  DIFFERS"))
    if len(runs) == 2:
        print("identical" if not differ else f"differ: {', '.join(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
