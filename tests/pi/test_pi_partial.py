"""Partial hits in a real Pi turn (issue 37): the model reads which words a hit lacks, `exact`
drops partial hits, and a word no session holds is corrected, the text saying so."""

from __future__ import annotations

from pihelp import WORD, Project
from test_pi_extension import Transcript, run_pi, text_of


def test_the_model_reads_partial_hits_with_their_missing_words(project: Project) -> None:
    # "another" is held only by a session of another project (not visible here): the visible
    # events hold at most two of the three words, and "another" is a word of the index (no
    # spelling correction for it).
    query = f"{WORD} module another"
    turns = [{"calls": [{"name": "event_search", "args": {"query": query}},
                        {"name": "event_search", "args": {"query": query, "exact": True}},
                        {"name": "event_search", "args": {"query": f"{WORD} modulle"}}]},
             {"text": "done"}]
    done, entries = run_pi(project, turns, f"what happened with the {WORD} module?")
    assert done.returncode == 0, done.stderr[-3000:]
    t = Transcript(entries)
    _, _, relaxed = t.result(0)
    _, _, exact = t.result(1)
    _, _, typo = t.result(2)
    assert not relaxed["isError"] and not exact["isError"] and not typo["isError"]

    hits = relaxed["details"]["result"]["hits"]
    ref = f"pi-event:{project.earlier.session_id}/{project.earlier_hit}"
    assert hits and hits[0]["ref"] == ref, [(h["ref"], h["kind"], h["missing"]) for h in hits]
    assert hits[0]["matched"] == [WORD, "module"] and hits[0]["missing"] == ["another"]
    assert project.elsewhere.session_id not in {h["sessionId"] for h in hits}
    text = text_of(relaxed)
    assert "all partial (none holds every word)" in text, text
    assert "(partial: matched 2 of 3 words; missing: another)" in text, text
    assert ref in text

    assert exact["details"]["result"]["hits"] == []
    assert f'No events match "{query}"' in text_of(exact), text_of(exact)

    fixed = typo["details"]["result"]
    assert fixed["didYouMean"]["corrections"] == [{"word": "modulle", "suggestion": "module"}]
    assert ref in {h["ref"] for h in fixed["hits"]}
    assert 'No recorded event holds "modulle"; searched for "module" instead' in text_of(typo)
