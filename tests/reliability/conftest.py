"""Reliability and security suite (docs/reliability.md). Bounded in CI; `PI_EVENT_SEARCH_SOAK=1`
runs the long form. Every test here also checks the read-only promise: pi_event_search code (in
this process, or in children started through guard.py) never changes a file outside the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_event_search.service.engine import Engine
from reliability import guard
from reliability.relsupport import ENGINE_DIR, FIGURES, SOAK
from support import tree_digest


def pytest_configure(config: pytest.Config) -> None:
    guard.install_in_process(ENGINE_DIR)


@pytest.fixture(autouse=True)
def read_only_promise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No write by engine code in this process under the test's tmp dir (index files excepted),
    and every in-process refresh leaves its sessions directories byte-identical."""
    guard.GUARDED[:] = [str(tmp_path)]
    guard.VIOLATIONS.clear()
    refresh = Engine.refresh

    def checked_refresh(self: Engine, *args: Any, **kw: Any) -> Any:
        roots = [Path(d.path) for d in self.dirs]
        before = [tree_digest(r) if r.is_dir() else None for r in roots]
        try:
            return refresh(self, *args, **kw)
        finally:
            after = [tree_digest(r) if r.is_dir() else None for r in roots]
            assert after == before, "a refresh changed the sessions directories"
            FIGURES.add("read-only", "in-process refreshes with byte-identical sessions trees")

    monkeypatch.setattr(Engine, "refresh", checked_refresh)
    yield
    found = list(guard.VIOLATIONS)
    guard.GUARDED.clear()
    guard.VIOLATIONS.clear()
    FIGURES.add("read-only", "in-process tests guarded")
    assert not found, f"pi_event_search changed files it must only read: {found[:5]}"


@pytest.fixture(scope="session")
def figures() -> Iterator[object]:
    yield FIGURES


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if FIGURES.data:
        FIGURES.write()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES.data:
        return
    terminalreporter.section(f"reliability figures ({'soak' if SOAK else 'ci'})")
    for section, values in sorted(FIGURES.data.items()):
        terminalreporter.write_line(f"{section}: " + ", ".join(f"{k}={v}" for k, v in
                                                               sorted(values.items())))
