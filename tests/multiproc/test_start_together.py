"""Issue 26: eight servers and two CLIs started at once on an empty index, round after round.
Every one answers a search with hits within the bound, and none answers with an error once it
has had hits. (Before the fix, concurrent creators got "database is locked" at open and such a
server never recovered: 11 of 300 bare opens failed; see docs/process-model.md.)"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from crowd import crowd, fresh_home, history

ROUNDS = int(os.environ.get("PIES_CROWD_ROUNDS", "3"))


def test_eight_servers_and_two_clis_at_once(tmp_path: Path) -> None:
    corpus = fresh_home(tmp_path / "corpus")
    history(corpus, sessions=20, turns=30)
    failures: list[str] = []
    for r in range(ROUNDS):
        home = fresh_home(tmp_path / f"round{r}")
        shutil.rmtree(home.sessions)
        shutil.copytree(corpus.sessions, home.sessions)
        for out in crowd(home, servers=8, clis=2, bound=90.0):
            if not out.ok:
                failures.append(f"round {r} {out.name}: first hit {out.first_hit_s}, "
                                f"errors after {out.errors_after_hit[:2]}, {out.detail}")
    assert not failures, "\n".join(failures)
