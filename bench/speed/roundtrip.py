"""Per-request overhead of the running server: N searches for a word that is in no index, over
stdio, with the server's own CPU per request (from /proc). Not a test; nothing asserts a time.

    .venv/bin/python -m bench.speed.roundtrip [N]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench.common.lspclient import LspClient

CLI = str(Path(sys.executable).parent / "pi-event-search")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "agent" / "sessions").mkdir(parents=True)
        env = {**os.environ, "PI_CODING_AGENT_DIR": f"{tmp}/agent",
               "PI_EVENT_SEARCH_INDEX": f"{tmp}/index.sqlite3"}
        client = LspClient([CLI, "serve"], env)
        client.initialize([tmp])
        for _ in range(50):  # warm up
            client.request("piEvents/search", {"query": "zzqqxx"})
        times: list[float] = []
        cpu0 = _cpu_seconds(client.proc.pid)
        for _ in range(n):
            start = time.perf_counter()
            client.request("piEvents/search", {"query": "zzqqxx"})
            times.append(time.perf_counter() - start)
        cpu = (_cpu_seconds(client.proc.pid) - cpu0) / n
        client.close()
    times.sort()
    print(f"{n} requests: p50 {times[n // 2] * 1e3:.2f} ms, p95 {times[int(n * .95)] * 1e3:.2f} ms, "
          f"server CPU {cpu * 1e3:.2f} ms/request, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
