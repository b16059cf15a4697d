"""Every relative link of the documents (README.md, docs/*.md, clients/*/README.md) reaches a file that
exists, and every `#anchor` a heading of its target, as GitHub names headings: documents moved and
renamed (issue 41) must not leave a reader at a dead link. bench/results/history.json, where the past
benchmark runs went, prints back with bench/report/history.py."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "clients").glob("*/README.md"))]
LINK = re.compile(r"\]\(([^)\s<>]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    """A repeated heading's anchor gets `-1`, `-2`, ... as on GitHub."""
    count: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6} (.+)$", FENCE.sub("", doc.read_text()), re.M):
        s = slug(m.group(1))
        out.add(s if s not in count else f"{s}-{count[s]}")
        count[s] = count.get(s, 0) + 1
    return out


def links(doc: Path) -> list[str]:
    return [t for t in LINK.findall(FENCE.sub("", doc.read_text()))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]  # https:, pi-event:, file:


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(doc: Path) -> None:
    dead = []
    for target in links(doc):
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            dead.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            dead.append(f"{target}: no heading with that anchor")
    assert not dead, f"{doc.relative_to(REPO)}: " + "; ".join(dead)


def test_the_checker_sees_a_dead_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Who can see what\n\n[x](#who-can-see-what) [y](#gone)\n")
    assert anchors(tmp_path / "a.md") == {"a", "who-can-see-what"}
    assert links(tmp_path / "a.md") == ["#who-can-see-what", "#gone"]


def test_history_prints_every_past_run() -> None:
    out = subprocess.run([sys.executable, str(REPO / "bench" / "report" / "history.py"), "--list"],
                         capture_output=True, text=True, check=True).stdout
    assert "round3-cold-index" in out and "masking-38-linear" in out
    md = subprocess.run([sys.executable, str(REPO / "bench" / "report" / "history.py"), "--id",
                         "round3-cold-index"], capture_output=True, text=True, check=True).stdout
    assert "| 1.1 GB | **now** | 24.1 / **46.0** |" in md


def test_a_finished_section_becomes_a_record_and_prints_back(tmp_path: Path) -> None:
    """The way a later run leaves docs/benchmarks.md for bench/results/history.json: nothing lost."""
    history = tmp_path / "history.json"
    history.write_text((REPO / "bench" / "results" / "history.json").read_text())
    section = ("## Cold index, issue 41\n\nBest of two, `abc1234`.\n\n| corpus | MB/s |\n|---|---:|\n"
               "| 250 MB | 80.5 |\n\n### Profile\n\n```sh\nbench/run.py --sizes 250M\n```\n")
    (tmp_path / "run.md").write_text(section)
    tool = [sys.executable, str(REPO / "bench" / "report" / "history.py"), "--file", str(history)]
    subprocess.run([*tool, "--add", str(tmp_path / "run.md"), "--id", "r41", "--date", "2026-12-06",
                    "--area", "cold-index", "--issue", "41"], check=True, capture_output=True)
    md = subprocess.run([*tool, "--issue", "41"], capture_output=True, text=True, check=True).stdout
    assert "| 250 MB | 80.5 |" in md and "Best of two, `abc1234`." in md
    assert "## Cold index, issue 41 / Profile" in md and "bench/run.py --sizes 250M" in md
    again = subprocess.run([*tool, "--add", str(tmp_path / "run.md"), "--id", "r41", "--date", "2026-12-06",
                            "--area", "cold-index"], capture_output=True, text=True)
    assert again.returncode == 2 and "exists" in again.stderr
