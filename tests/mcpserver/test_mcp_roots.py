"""Roots fail closed (issue 47): an MCP server given no root, by `--root` or by its client (none
declared, or `roots/list` failing or unanswered), takes its Git root or working directory, but
never `/`, a home directory or a folder above one: there it answers nothing and says how to give a
root. A failed or unanswered `roots/list` counts as no roots once, not at every call."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from test_mcp_server import _two_projects, failed, ok  # noqa: E402

from support import PiHome  # noqa: E402

RootsCallback = Callable[[Any], Awaitable[types.ListRootsResult]]


@asynccontextmanager
async def serving(home: PiHome, cwd: Path, list_roots: RootsCallback | None,
                  env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "pi_event_search", "mcp"],
                                   env={**home.env(), **(env or {})}, cwd=str(cwd))
    async with Client(params, mode="legacy", list_roots_callback=list_roots,
                      client_info=types.Implementation(name="test-agent", version="1")) as c:
        yield c


async def _fails(_ctx: Any) -> types.ListRootsResult:
    raise RuntimeError("roots are not available")


async def _never(_ctx: Any) -> types.ListRootsResult:
    await asyncio.sleep(3600)
    raise AssertionError


async def _none(_ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


async def _timed(c: Client, tool: str, args: dict[str, Any]) -> tuple[float, str]:
    t0 = time.monotonic()
    answer = await failed(c, tool, args)
    return time.monotonic() - t0, answer


@pytest.mark.parametrize("list_roots", [None, _fails, _none], ids=["undeclared", "failing", "empty"])
async def test_a_server_in_slash_without_roots_answers_nothing(pi_home, tmp_path, list_roots):
    _mine, _other, a, b = _two_projects(pi_home, tmp_path)
    async with serving(pi_home, Path("/"), list_roots) as c:
        took, answer = await _timed(c, "event_search", {"query": "reconnect"})
        assert took < 1.0  # the first call: no wait for roots nor for the index
        assert "no root" in answer and "--root" in answer and "(/)" in answer
        assert a.session_id not in answer and b.session_id not in answer
        listed = await failed(c, "event_sessions", {})
        assert a.session_id not in listed and b.session_id not in listed
        read = await failed(c, "event_read", {"ref": f"pi-event:{a.session_id}/{a.ids[0]}"})
        assert "websocket" not in read and "no root" in read


async def test_a_server_in_a_home_directory_answers_nothing(pi_home, tmp_path):
    _mine, _other, a, _b = _two_projects(pi_home, tmp_path)
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    for cwd in (home, tmp_path):  # the home itself, and a folder above it
        async with serving(pi_home, cwd, None, env={"HOME": str(home)}) as c:
            answer = await failed(c, "event_search", {"query": "reconnect"})
            assert "no root" in answer and a.session_id not in answer
    # below a home, the working directory is the root as before
    async with serving(pi_home, tmp_path / "mine", None, env={"HOME": str(home)}) as c:
        assert a.session_id in await ok(c, "event_search", {"query": "reconnect"})


async def test_an_unanswered_roots_list_is_waited_for_once(pi_home, tmp_path):
    mine, _other, a, b = _two_projects(pi_home, tmp_path)
    async with serving(pi_home, mine, _never) as c:
        first = await ok(c, "event_search", {"query": "reconnect"})  # the wait: ROOTS_WAIT
        assert a.session_id in first and b.session_id not in first  # the working directory
        t0 = time.monotonic()
        again = await ok(c, "event_search", {"query": "reconnect"})
        assert time.monotonic() - t0 < 1.0 and a.session_id in again
