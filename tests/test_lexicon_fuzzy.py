"""The trigram-filtered fuzzy lookup returns exactly what scanning every name returns."""

from __future__ import annotations

import random
import string

import pytest
from rapidfuzz import fuzz, process

from hopgraph.lexicon.fuzzy import FuzzyIndex, trigrams


def typo(rng: random.Random, text: str) -> str:
    """One to three random inserts, deletes or substitutions."""
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(chars) + 1)
        kind = rng.choice("ids")
        if kind == "i" or not chars:
            chars.insert(at, rng.choice(string.ascii_lowercase))
        elif kind == "d" and at < len(chars):
            del chars[at]
        elif at < len(chars):
            chars[at] = rng.choice(string.ascii_lowercase)
    return "".join(chars)


@pytest.mark.parametrize("cutoff", [80.0, 90.0])
def test_same_best_match_as_a_full_scan(cutoff: float) -> None:
    rng = random.Random(int(cutoff))
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
             for _ in range(400)]
    keys = sorted({" ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(3000)})
    keys += ["ab", "abc", "anna", "annie", "hanna"]  # short names: the length window only
    index = FuzzyIndex(keys)
    queries = [typo(rng, rng.choice(keys)) for _ in range(300)] + ["ana", "x", "", "annd"]
    for query in queries:
        full = process.extractOne(query, keys, scorer=fuzz.ratio, score_cutoff=cutoff)
        expected = None if full is None else (full[0], float(full[1]))
        assert index.best(query, cutoff) == expected, query


def test_the_filter_really_filters() -> None:
    rng = random.Random(3)
    keys = sorted({" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9)))
                            for _ in range(2)) for _ in range(5000)})
    index = FuzzyIndex(keys)
    target = keys[1234]
    query = target[:-1] + ("x" if target[-1] != "x" else "y")  # one letter wrong
    assert 0 < index.candidates(query, 90.0).size < 50
    assert index.best(query, 90.0) == (target, fuzz.ratio(query, target))
    assert trigrams("abcd") == {"abc", "bcd"} and trigrams("ab") == set()
