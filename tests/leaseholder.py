"""A writer for tests/test_lease.py, in a process of its own: takes the lease of an index and
writes in write batches without end, as a pass does (each commit followed at once by the next
BEGIN), until it loses the lease. Prints `holding <epoch>`, then `lost` when a write raised
LeaseLost and the lease was released (a holder woken up to hand over stops itself there)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from pi_event_search.index import store, writes  # noqa: E402
from pi_event_search.service.lease import Lease, LeaseLost  # noqa: E402


def main(index: Path) -> int:
    lease = Lease(index)
    conn = lease.try_take(lambda: store.connect(index))
    if conn is None:
        print("busy", flush=True)
        return 1
    epoch = conn.execute("SELECT value FROM meta WHERE key = 'lease'").fetchone()["value"]
    print(f"holding {epoch}", flush=True)
    i = 0
    try:
        with writes.WriteBatch(conn, seconds=0.3) as batch:
            while True:
                batch.begin()
                i += 1
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('probe', ?)",
                             (str(i),))
                batch.maybe_commit()
    except LeaseLost:
        conn.close()
        lease.release()
        print("lost", flush=True)
        return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
