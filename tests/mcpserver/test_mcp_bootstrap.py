"""The README's first command, `./scripts/install-and-search`, on a fresh HOME installs the MCP
extra too (the bootstrap's `--extra mcp`, from this checkout and the package index): the
`pi-event-search` it links then answers the SDK's stdio client. An install without the extra is not
current for a request with it, and the reverse is."""

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


async def test_the_first_install_serves_mcp(pi_home: PiHome, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PI_EVENT_SEARCH_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    # pip's download cache stays the user's: the HOME is fresh, the wheels need not be fetched again.
    env.setdefault("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    env["HOME"] = str(fresh)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    proc = subprocess.run([str(REPO / "scripts" / "install-and-search")], capture_output=True, text=True,
                          env=env, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL)
    home = fresh / ".local" / "share" / "pi-event-search"
    log = (home / "install.log").read_text() if (home / "install.log").exists() else ""
    assert proc.returncode == 0, (proc.stderr[-3000:], log[-3000:])
    linked = fresh / ".local" / "bin" / "pi-event-search"
    record = json.loads((home / "installed.json").read_text())
    assert record["identity"].endswith("+mcp") and record["source"].endswith("[mcp]"), record

    params = StdioServerParameters(command=str(linked), args=["mcp", "--root", str(tmp_path)],
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
