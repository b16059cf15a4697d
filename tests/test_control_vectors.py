"""The server's control-byte rule against the vectors every client runs too
(tests/data/control-vectors.json): one rule, bounded, an unterminated sequence removing only
itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_event_search.core import secrets

VECTORS = Path(__file__).parent / "data" / "control-vectors.json"
CASES = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_control_vector(case):
    assert secrets.strip_controls(case["in"]) == case["out"]
    # scrub takes the same path when it meets a control byte (and masks nothing here)
    assert secrets.scrub(case["in"]) == case["out"]


def test_vectors_cover_the_rule():
    """Each branch of the rule has a case: CSI, terminated strings, unterminated strings, C1,
    C0, bidirectional overrides, text that must stay."""
    names = " ".join(c["name"] for c in CASES)
    for word in ("CSI", "OSC", "DCS", "unterminated", "C1", "C0", "bidirectional", "mojibake", "stays"):
        assert word in names, word
