"""The `project` fixture of the Pi end-to-end tests (tests/pi/pihelp.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pihelp import Project, make_project


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return make_project(tmp_path)
