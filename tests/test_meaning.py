"""The meaning model (meaning/minilm.py, meaning/wordpiece.py) with its real weights: BERT's
tokenizer rules, vectors that put a paraphrase nearer than an unrelated text, the same vector
whatever else shares its batch, and weights that are not the published model's refused."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from builder import SessionBuilder
from pi_event_search.meaning import minilm
from support import PiHome


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's model forgotten before and after (a test may point it elsewhere)."""
    monkeypatch.delenv("PI_EVENT_SEARCH_MEANING", raising=False)
    minilm._loaded.cache_clear()
    yield
    minilm._loaded.cache_clear()


def model() -> minilm.Model:
    found = minilm.model()
    assert isinstance(found, minilm.Model), (
        f"the model is installed by scripts/test ({minilm.INSTALL}): {found}")
    return found


def pieces(text: str, limit: int = 32) -> list[str]:
    m = model()
    names = {i: p for p, i in m.tokens.ids.items()}
    return [names[i] for i in m.tokens.encode(text, limit)]


def test_words_are_cut_as_bert_cuts_them(fresh: None) -> None:
    assert pieces("Héllo, WORLD!") == ["[CLS]", "hello", ",", "world", "!", "[SEP]"]
    assert pieces("unaffable") == ["[CLS]", "una", "##ffa", "##ble", "[SEP]"]
    assert pieces("a\x07b 中文") == ["[CLS]", "ab", "中", "文", "[SEP]"]  # control dropped
    assert pieces("x" * 101) == ["[CLS]", "[UNK]", "[SEP]"]
    assert pieces("one two three four five six", 5) == ["[CLS]", "one", "two", "three", "[SEP]"]


def test_a_paraphrase_lies_nearer_than_an_unrelated_text(fresh: None) -> None:
    q, said, other = model().embed([
        "git commit was refused",
        "error: the commit was blocked by the pre-commit guard, run the tests first",
        "zebrafish tank readings uploaded to the shared drive"])
    assert abs(float(q @ q) - 1.0) < 1e-5
    assert float(q @ said) > float(q @ other) + 0.2


def test_a_vector_does_not_depend_on_its_batch(fresh: None) -> None:
    m = model()
    short = "the build broke after the refactor"
    alone = m.embed([short])[0]
    padded = m.embed([short, "a much longer text " * 40])[0]  # padded to the longer one
    assert float(alone @ padded) > 0.99999


def test_weights_that_are_not_the_model_are_refused(fresh: None, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    real = minilm.folder()
    assert real is not None
    fake = tmp_path / "model"
    fake.mkdir()
    shutil.copy(real / "vocab.txt", fake / "vocab.txt")
    data = bytearray((real / "model.safetensors").read_bytes())
    data[-1] ^= 1  # one bit of one weight
    (fake / "model.safetensors").write_bytes(bytes(data))
    monkeypatch.setenv("PI_EVENT_SEARCH_MODEL", str(fake))
    found = minilm.model()
    assert isinstance(found, minilm.Unavailable)
    assert "is not all-MiniLM-L6-v2's weights" in found.why
    assert minilm.describe().startswith("words only: cannot load the model")


def test_no_model_and_turned_off_say_so(fresh: None, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_EVENT_SEARCH_MODEL", str(tmp_path))
    assert minilm.describe() == f"words only: no model installed ({minilm.INSTALL})"
    monkeypatch.setenv("PI_EVENT_SEARCH_MEANING", "off")
    assert isinstance(minilm.model(), minilm.Unavailable)
    assert "PI_EVENT_SEARCH_MEANING=off" in minilm.describe()


def test_vectors_are_kept_in_a_file_every_process_shares(fresh: None, tmp_path: Path) -> None:
    import sqlite3

    from pi_event_search.meaning.vectors import FILE, Vectors

    texts = ["the build broke after the refactor", "pip refused the system-wide install"]
    index = tmp_path / "index-v16.sqlite3"
    first = Vectors().of(model(), texts, 128, index)
    db = sqlite3.connect(tmp_path / FILE)
    stored = db.execute("SELECT count(*), sum(length(v)) FROM vectors").fetchone()
    assert stored == (2, 2 * 384 * 2)  # float16, never the text
    assert not any(t.encode() in (tmp_path / FILE).read_bytes() for t in texts)
    # another process (a new cache) reads them back: the same vectors
    again = Vectors().of(model(), list(reversed(texts)), 128, index)
    assert float(abs(again[::-1] - first).max()) == 0.0
    assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    # a file that cannot be made: remembered in this process alone
    alone = Vectors()
    out = alone.of(model(), texts, 128, tmp_path / "missing" / "index.sqlite3")
    assert out.shape == (2, 384) and alone.files == {tmp_path / "missing" / FILE: None}


def test_reading_ahead_begins_again_on_a_rebuilt_index(fresh: None, pi_home: PiHome,
                                                       tmp_path: Path) -> None:
    """Reading ahead remembers eids, which are locations in one index: on an index rebuilt (its
    eids begun again, fewer than were read) it reads the events again instead of waiting for
    eids it had passed."""
    from pi_event_search.query import meaning
    from pi_event_search.service.engine import Engine

    sb = SessionBuilder(pi_home.sessions, str(tmp_path))
    for n in range(12):
        sb.user(f"message {n} about the deploy of service {n}")
    engine = Engine.open(pi_home.index, [])
    engine.refresh()
    newest = engine.reader().execute("SELECT max(eid) AS n FROM events").fetchone()["n"]
    ahead = meaning.Ahead(below=1, top=newest + 5_000, read=20_000)  # an index since rebuilt
    while meaning.read_ahead(engine.reader(), ahead, 20_000, 5.0):
        pass
    assert ahead.top == newest + 1 and ahead.below == 1, ahead
    assert ahead.read == newest, ahead


def test_the_weights_are_the_file_s_pages_shared_by_every_process(fresh: None) -> None:
    """Every editor window and Pi process searches with the model: its 90 MB are the file's own
    pages, mapped, not a copy in each process."""
    m = model()
    maps = Path("/proc/self/maps").read_text()
    assert str((m.where / "model.safetensors").resolve()) in maps
