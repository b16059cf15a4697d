"""English inflections of a query word: fail -> fail, fails, failed, failing.

Two words are inflections of each other when they reduce to the same key under Porter's
inflectional steps (1a plurals, 1b -ed/-ing, 1c y->i) and his final-e rule (5a, 5b). Only those
steps: derivations (connect/connection, general/generate) stay different words. Forms are generated
from the word and its key by regular suffix rules and kept only when they reduce to the same key,
so a query word never reaches an unrelated word (string is not str + ing: "str" has no vowel).
Irregular forms (ran, took) are not covered.
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiou")
MIN_CHARS = 3
# Function words: expanding them finds nothing a person wants and costs a term lookup each.
STOP = frozenset((
    "the", "and", "for", "are", "was", "were", "has", "had", "have", "does", "did", "this", "that",
    "with", "from", "into", "not", "but", "you", "your", "its", "our", "their", "them", "then",
    "than", "when", "what", "which", "who", "how", "why", "can", "could", "should", "would",
    "will", "all", "any"))


def _consonant(w: str, i: int) -> bool:
    """Porter's consonant: not a vowel, and y only at the start or after a vowel. A run of y's
    alternates from its first, so the walk back is one loop (recursing a letter at a time
    overflowed Python's stack on a word of 1,500 y's)."""
    c = w[i]
    if c in _VOWELS:
        return False
    if c != "y":
        return True
    first = i
    while first > 0 and w[first - 1] == "y":
        first -= 1
    starts = first == 0 or w[first - 1] in _VOWELS
    return starts == ((i - first) % 2 == 0)


def _consonants(w: str) -> list[bool]:
    """_consonant of every letter in one pass: the measure of a long word stays linear."""
    out: list[bool] = []
    for i, c in enumerate(w):
        out.append(c not in _VOWELS and (c != "y" or i == 0 or not out[-1]))
    return out


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in the stem."""
    m, prev_vowel = 0, False
    for consonant in _consonants(stem):
        if prev_vowel and consonant:
            m += 1
        prev_vowel = not consonant
    return m


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _double(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _consonant(w, len(w) - 1)


def _cvc(w: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y (hop, not hoop or fix)."""
    return (len(w) >= 3 and _consonant(w, len(w) - 3) and not _consonant(w, len(w) - 2)
            and _consonant(w, len(w) - 1) and w[-1] not in "wxy")


def _step1a(w: str) -> str:
    if w.endswith(("sses", "ies")):
        return w[:-2]
    if w.endswith(("ss", "us", "is")):  # class, status, analysis: not plurals
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[:-len(suffix)]):
            stem = w[:-len(suffix)]
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if _double(stem) and stem[-1] not in "lsz":
                return stem[:-1]
            if _measure(stem) == 1 and _cvc(stem):
                return stem + "e"
            return stem
    return w


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    if _measure(w) > 1 and _double(w) and w.endswith("l"):
        w = w[:-1]
    return w


def key(word: str) -> str:
    """The inflectional key: equal keys, same word in another inflection. A final double
    consonant is undoubled whether or not a suffix was removed (Porter keeps "add" but makes
    "adding" "ad")."""
    w = _step1b(_step1a(word))
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    w = _step5(w)
    return w[:-1] if _double(w) and w[-1] not in "lsz" else w


def _lemmas(w: str) -> set[str]:
    """Base forms the word may be an inflection of (some wrong; the key check sorts them)."""
    out = {w}
    if w.endswith(("ies", "ied")):
        out.add(w[:-3] + "y")
    if w.endswith("es"):
        out |= {w[:-2], w[:-1]}
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        out.add(w[:-1])
    if w.endswith("ed"):
        out |= {w[:-2], w[:-1]}
        if _double(w[:-2]):
            out.add(w[:-3])
    if w.endswith("ing"):
        out |= {w[:-3], w[:-3] + "e"}
        if _double(w[:-3]):
            out.add(w[:-4])
        if w.endswith("ying"):
            out.add(w[:-4] + "ie")
    # stopping: "stop", not "stopp" (nor "stoppe"), once the undoubled lemma is there
    doubled = {x for x in out if len(x) > MIN_CHARS and _double(x.rstrip("e"))
               and x.rstrip("e")[-1] not in "lsz" and x.rstrip("e")[:-1] in out}
    return {x for x in out - doubled if len(x) >= MIN_CHARS}


def _inflect(lemma: str) -> set[str]:
    """Regular English inflections of a base form (doubling both ways past one syllable:
    committed, limited)."""
    out = {lemma}
    if lemma.endswith(("s", "x", "z", "ch", "sh", "o")):
        out.add(lemma + "es")
    if lemma.endswith("y") and _consonant(lemma, len(lemma) - 2):
        out |= {lemma[:-1] + "ies", lemma[:-1] + "ied"}
    else:
        out.add(lemma + "s")
    if lemma.endswith("ie"):
        out |= {lemma + "d", lemma[:-2] + "ying"}
    elif lemma.endswith("e"):
        out.add(lemma + "d")
        out.add(lemma + "ing" if lemma.endswith(("ee", "ye", "oe")) else lemma[:-1] + "ing")
    else:
        out |= {lemma + "ing"} if lemma.endswith("y") else {lemma + "ed", lemma + "ing"}
        if lemma.endswith("y") and not _consonant(lemma, len(lemma) - 2):
            out.add(lemma + "ed")
        if _cvc(lemma):
            out |= {lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"}
            if _measure(lemma) == 1:
                out -= {lemma + "ed", lemma + "ing"}
    return out


def _stacked(form: str) -> bool:
    """An inflection of an inflection (failings, updateds): the word's own lemma is enough."""
    return form.endswith(("ings", "eds", "inged", "inging", "eded", "eding"))


def expandable(word: str) -> bool:
    """A plain lower-case English-looking word: letters only, not a stop word, long enough."""
    return len(word) >= MIN_CHARS and word.isascii() and word.isalpha() and word not in STOP


@lru_cache(maxsize=4096)
def forms(word: str) -> tuple[str, ...]:
    """The word and its other inflections (sorted; the word itself included)."""
    w = word.lower()
    if not expandable(w):
        return (w,)
    k = key(w)
    found = {form for lemma in _lemmas(w) if key(lemma) == k for form in _inflect(lemma)
             if len(form) >= MIN_CHARS and key(form) == k and not _stacked(form)}
    found.add(w)
    return tuple(sorted(found))
