"""Reliability and security suite (docs/reliability.md). Bounded in CI; `PI_EVENT_SEARCH_SOAK=1`
runs the long form. Every test here also checks the read-only promise: pi_event_search code (in
this process, or in children started through guard.py) never changes a file outside the index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reliability import guard
from reliability.relsupport import ENGINE_DIR, FIGURES, SOAK


def pytest_configure(config: pytest.Config) -> None:
    guard.install_in_process(ENGINE_DIR)


@pytest.fixture(autouse=True)
def read_only_promise(tmp_path: Path) -> Iterator[None]:
    """No write by engine code in this process under the test's tmp dir (index files excepted)."""
    guard.GUARDED[:] = [str(tmp_path)]
    guard.VIOLATIONS.clear()
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
