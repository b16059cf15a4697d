"""The one bootstrap installs the MCP extra when asked (`--extra mcp`), from this checkout and the
package index, into a private venv whose `pi-event-search mcp` then answers the SDK's client; an
install without the extra is not current for a request with it, and the reverse is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from support import PiHome  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP = REPO / "server" / "pi_event_search" / "bootstrap.py"
INSTALL_TIMEOUT = 900


def bootstrap(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run([sys.executable, str(BOOTSTRAP), *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=INSTALL_TIMEOUT)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


async def test_bootstrap_installs_the_mcp_extra(pi_home: PiHome, tmp_path: Path) -> None:
    home = tmp_path / "home"
    code, events, log = bootstrap("--home", str(home), "--from", str(REPO), "--extra", "mcp")
    assert code == 0, (events, log[-3000:])
    done = events[-1]
    assert done["event"] == "done" and done["installed"] is True
    assert done["record"]["identity"].endswith("+mcp") and done["record"]["source"].endswith("[mcp]")

    params = StdioServerParameters(command=done["server"], args=["mcp", "--root", str(tmp_path)],
                                   env=pi_home.env(), cwd=str(tmp_path))
    async with Client(params, mode="legacy",
                      client_info=types.Implementation(name="t", version="1")) as client:
        listed = await client.list_tools()
    assert {t.name for t in listed.tools} == {"event_search", "event_read", "event_trace",
                                              "event_sessions"}

    # Asked without the extra, the install that has it is current; with it, one without is not.
    code, events, _ = bootstrap("--home", str(home), "--from", str(REPO), "--check")
    assert code == 0 and events[-1]["current"] is True, events
    record = json.loads((home / "installed.json").read_text())
    record["identity"] = record["identity"].removesuffix("+mcp")
    (home / "installed.json").write_text(json.dumps(record))
    code, events, _ = bootstrap("--home", str(home), "--from", str(REPO), "--check",
                                "--extra", "mcp")
    assert code == 0 and events[-1]["current"] is False, events
