"""The skip check of ./scripts/test: every skipped test, and every lint tool skipped, must be on
ALLOWED, a short list of pieces that cannot be installed here, each saying why. Anything else
skipped (a setup step that failed, a tool not found) fails the run, so that no suite can stop
running quietly.

    python tests/skips.py JUNIT_XML [OTHER_SKIPS_TXT]

JUNIT_XML is pytest's --junitxml report; OTHER_SKIPS_TXT holds one line per tool another step
skipped ("lua lint: lua-language-server: why"). Prints the skips, allowed or not; exits 1 when one
is not allowed or when the report holds no test at all.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Allowed:
    pattern: str  # a regular expression searched for in the skip's reason
    why: str


ALLOWED = (
    Allowed(r"set TELESCOPE_RTP and PLENARY_RTP to checkouts of telescope\.nvim",
            "telescope.nvim and plenary.nvim are on no package registry; their only source is "
            "github.com, which this machine cannot reach (scripts/setup.d/30-neovim.sh tries)"),
    Allowed(r"^lua-language-server: ",
            "lua-language-server is on no registry this project reaches (not npm, PyPI or "
            "Debian 12); stylua and luacheck still lint every Lua file"),
)


@dataclass(frozen=True, slots=True)
class Skip:
    where: str  # a test id, or the step that skipped a tool
    reason: str

    def allowed(self) -> Allowed | None:
        return next((a for a in ALLOWED if re.search(a.pattern, self.reason)), None)


def from_junit(path: Path) -> tuple[int, list[Skip]]:
    """(test cases in the report, the skipped ones)."""
    root = ET.parse(path).getroot()
    cases = list(root.iter("testcase"))
    skips = []
    for case in cases:
        for el in case.findall("skipped"):
            where = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
            skips.append(Skip(where, el.get("message") or (el.text or "").strip()))
    return len(cases), skips


def from_lines(path: Path) -> list[Skip]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        where, _, reason = line.partition(": ")
        if line.strip():
            out.append(Skip(where, reason))
    return out


def report(cases: int, skips: list[Skip]) -> tuple[list[str], bool]:
    """The lines to print, and whether the run may pass."""
    lines = [f"== skips: {len(skips)} ({cases} tests in the report)"]
    bad = 0
    for s in skips:
        ok = s.allowed()
        bad += ok is None
        verdict = "allowed" if ok else "NOT ALLOWED"
        lines.append(f"{verdict:<11} {s.where}: {s.reason}")
        if ok:
            lines.append(f"{'':<11} (why allowed: {ok.why})")
    if cases == 0:
        lines.append("no test ran: a suite that collects nothing is broken, never a pass")
    if bad:
        lines.append(f"{bad} skip(s) not on the allow-list (tests/skips.py ALLOWED): install the "
                     "missing piece (see test-artifacts/setup-*.log), or fix the test")
    return lines, cases > 0 and not bad


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    cases, skips = from_junit(Path(argv[0]))
    if len(argv) == 2:
        skips += from_lines(Path(argv[1]))
    lines, ok = report(cases, skips)
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
