"""BERT's uncased WordPiece tokenizer, as the model was trained with it: text cleaned, lower-cased
and stripped of accents, split on whitespace and punctuation, each word cut into the longest
vocabulary pieces from its start (a piece inside a word is written `##piece`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from functools import lru_cache

MAX_WORD = 100  # longer words are one [UNK], as BERT's own tokenizer has it


class WordPiece:
    def __init__(self, vocab: list[str]) -> None:
        self.ids = {piece: i for i, piece in enumerate(vocab)}
        self.unk = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]
        self.pieces = lru_cache(maxsize=65536)(self._pieces)

    def encode(self, text: str, limit: int) -> list[int]:
        """[CLS], the text's first pieces, [SEP]: at most `limit` ids."""
        out = [self.cls]
        room = limit - 2
        for word in words(text):
            out.extend(self.pieces(word))
            if len(out) > room:
                del out[room + 1:]
                break
        out.append(self.sep)
        return out

    def _pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD:
            return (self.unk,)
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece)
                if found is not None:
                    out.append(found)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(out)


def words(text: str) -> Iterator[str]:
    """The basic tokenizer's words: whitespace and punctuation split, CJK characters alone."""
    for chunk in text.lower().split():
        if not chunk.isascii() or not chunk.isprintable():
            # accents stripped; control and format characters dropped (BERT's clean-up)
            chunk = "".join(c for c in unicodedata.normalize("NFD", chunk)
                            if unicodedata.category(c) not in ("Mn", "Cc", "Cf"))
        start = 0
        for i, c in enumerate(chunk):
            if _alone(c):
                if start < i:
                    yield chunk[start:i]
                yield c
                start = i + 1
        if start < len(chunk):
            yield chunk[start:]


@lru_cache(maxsize=4096)
def _alone(c: str) -> bool:
    """Punctuation (BERT counts every ASCII non-alphanumeric printable as such) and CJK
    ideographs stand alone."""
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    cat = unicodedata.category(c)
    if cat.startswith("P"):
        return True
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2FA1F
            or 0xF900 <= o <= 0xFAFF)
