"""Words of any script for search and BM25: the Han character ranges and English stop words.

Chinese has no spaces, so a run of Han characters is one "word" that each caller cuts its
own way (BM25: unigrams + bigrams; the search box: three-character pieces); any other run
of letters or digits is a word. Han = CJK Unified Ideographs and Extension A, the
Compatibility Ideographs, and Extensions B–H (U+20000–U+3134F: rare and historical
characters, common in names and classical legal texts).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
WORD_RE = re.compile(rf"[{HAN_RANGES}]+|[^\W_]+", re.UNICODE)
HAN_RE = re.compile(rf"[{HAN_RANGES}]")
STOP_WORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to "
    "was were what which with how can do does there their these those been being into "
    "than then any such not no also may why when where who whom will would should could "
    "about".split()
)


def words(text: str) -> Iterator[tuple[str, bool]]:
    """(word, is_han) for every run of Han characters or of other letters/digits."""
    for match in WORD_RE.finditer(text):
        word = match.group()
        yield word, bool(HAN_RE.match(word))
