"""Search and BM25 cut text into the same words: one list of Han ranges and stop words."""

from __future__ import annotations

from annotator.search import han_bigrams, query_terms
from numerics.bm25 import tokenize
from numerics.words import STOP_WORDS, words

EXTENSION_B = "\U00020bb7"  # 𠮷 (U+20BB7), CJK Unified Ideographs Extension B


def test_an_extension_b_character_is_han_in_search_and_in_bm25():
    text = f"{EXTENSION_B}野家 lift"
    assert list(words(text)) == [(f"{EXTENSION_B}野家", True), ("lift", False)]
    bigrams = [f"{EXTENSION_B}野", "野家"]
    # BM25 indexes the Han run as unigrams and bigrams, search as the same bigrams and a
    # three-character piece: both cut at the same place.
    assert tokenize(text) == [EXTENSION_B, "野", "家", *bigrams, "lift"]
    assert han_bigrams(text) == bigrams
    assert query_terms(text) == [f"{EXTENSION_B}野家", "lift"]


def test_both_drop_the_same_stop_words():
    question = "why would the wing lift"
    assert [w for w in tokenize(question) if w in STOP_WORDS] == []
    assert tokenize(question) == query_terms(question) == ["wing", "lift"]
