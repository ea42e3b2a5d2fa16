"""Full-text search over a project's chunks and documents, in English, Chinese or any script.

``search()`` (the candidate pool's fallback when no run exists) and ``search_page()``
(the search box: a page of results and how many there are) are the entry points.
Matching is by substring, so Chinese needs no word segmenter, and every term is served
by an index: trigram indexes for terms of three characters or more, character-bigram
indexes for shorter ones and (on PostgreSQL) for Chinese; candidates are confirmed
against the text, so results are exact (``search_sql`` holds the SQL of each database).

Two modes: ``any_term=False`` (the search box) wants every term; ``any_term=True`` (a
query's text turned into a candidate pool) wants any term and ranks by how many match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from numerics.words import HAN_RANGES, STOP_WORDS, words

from .models import Chunking, Project
from .search_sql import Scope, count_matching, matching, matching_page, ranked_window

MIN_INDEXED = 3  # a question's Chinese runs are cut into pieces this long
MAX_TERMS = 32
MAX_TERM_CHARS = 100
COUNT_LIMIT = 10_000  # results are counted up to here ("more than 10,000")

_TERM_RE = re.compile(r'"([^"]+)"|(\S+)')


def split_terms(text: str) -> list[str]:
    """What a person typed: whitespace-separated terms, "quoted phrases" kept whole."""
    terms: list[str] = []
    for match in _TERM_RE.finditer(text or ""):
        term = (match.group(1) or match.group(2)).strip()[:MAX_TERM_CHARS]
        if term and term.lower() not in (t.lower() for t in terms):
            terms.append(term)
    return terms[:MAX_TERMS]


def query_terms(text: str) -> list[str]:
    """Terms of a natural-language question, for a pool ranked by how many of them match.

    English words minus stop words; Chinese runs (no spaces) as overlapping three-character
    pieces, or whole when only two characters long.
    """
    terms: list[str] = []
    for word, is_han in words((text or "").lower()):
        if is_han:
            if len(word) < MIN_INDEXED:
                pieces = [word] if len(word) == 2 else []
            else:
                pieces = [word[i : i + MIN_INDEXED] for i in range(len(word) - MIN_INDEXED + 1)]
        elif word in STOP_WORDS or len(word) < 2:
            pieces = []
        else:
            pieces = [word]
        for piece in pieces:
            if piece not in terms:
                terms.append(piece)
    return terms[:MAX_TERMS]


def han_bigrams(text: str) -> list[str]:
    """Every pair of adjacent Chinese characters: a wider net than three-character pieces."""
    pairs: list[str] = []
    for word, is_han in words(text or ""):
        if is_han:
            for i in range(len(word) - 1):
                if word[i : i + 2] not in pairs:
                    pairs.append(word[i : i + 2])
    return pairs[:MAX_TERMS]


# A letter or digit that is not Han: where a non-Han word may not continue.
_NOT_HAN_LETTER = rf"(?![{HAN_RANGES}])[^\W_]"


def _whole_word(term: str) -> str:
    """A pattern for ``term`` as a whole word: "wing" does not match inside "owing".

    Chinese has no spaces, so an edge that is a Han character (or not a letter) may touch
    anything; an edge that is a letter or digit of another script may not touch another."""
    pattern = re.escape(term)
    if re.match(_NOT_HAN_LETTER, term[0]):
        pattern = rf"(?<!{_NOT_HAN_LETTER}){pattern}"
    if re.match(_NOT_HAN_LETTER, term[-1]):
        pattern = rf"{pattern}(?!{_NOT_HAN_LETTER})"
    return pattern


def highlight(text: str, terms: list[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_match) for showing search hits: whole words, any case."""
    terms = [t for t in terms if t]
    if not terms or not text:
        return [(text, False)]
    pattern = re.compile(
        "|".join(_whole_word(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE
    )
    pieces: list[tuple[str, bool]] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() > position:
            pieces.append((text[position : match.start()], False))
        pieces.append((match.group(), True))
        position = match.end()
    if position < len(text):
        pieces.append((text[position:], False))
    return pieces


def default_chunking(project: Project) -> Chunking | None:
    """The project's first chunking (the oldest), used when the annotator picks none."""
    return project.chunkings.order_by("pk").first()


def _scope(project: Project, documents: bool, chunking: Chunking | None) -> Scope | None:
    if documents:
        return Scope(True, project.pk)
    chunking = chunking or default_chunking(project)
    if chunking is None or chunking.project_id != project.pk:
        return None
    return Scope(False, chunking.pk)


def search(
    project: Project,
    text: str,
    *,
    documents: bool = False,
    chunking: Chunking | None = None,
    any_term: bool = False,
    limit: int = 50,
) -> list[int]:
    """Primary keys of the project's chunks (of ``chunking``) or documents matching ``text``.

    ``text`` is what a person typed (terms and "quoted phrases", all required), or with
    ``any_term=True`` a natural-language question (any of its terms, ranked by matches).
    Best matches first.
    """
    scope = _scope(project, documents, chunking)
    if scope is None:
        return []
    if not any_term:
        return matching(scope, split_terms(text), any_term=False, limit=limit)
    found = matching(scope, query_terms(text), any_term=True, limit=limit)
    if len(found) < limit:
        # Chinese questions rarely share three-character pieces with the answer; top the
        # pool up with rows sharing two-character pieces (ranked by how many they share).
        bigrams = [b for b in han_bigrams(text) if b not in query_terms(text)]
        if bigrams:
            seen = set(found)
            more = matching(scope, bigrams, any_term=True, limit=limit)
            found += [pk for pk in more if pk not in seen][: limit - len(found)]
    return found


@dataclass(frozen=True)
class Found:
    """One page of search results and how many there are in all."""

    ids: list[int]  # this page's primary keys, best first
    total: int | None  # every match, counted up to COUNT_LIMIT; None: not counted yet
    offset: int  # how many results come before this page
    at_least: int = 0  # when not counted yet: there are at least this many
    on_page: int | None = None  # how many this page shows, when its ids were not read

    @property
    def counted(self) -> bool:
        return self.total is not None

    @property
    def more_than(self) -> bool:
        """The count stopped at COUNT_LIMIT: there are more."""
        return self.total is not None and self.total > COUNT_LIMIT

    @property
    def shown_total(self) -> int:
        return self.at_least if self.total is None else min(self.total, COUNT_LIMIT)

    @property
    def first(self) -> int:
        """The number of this page's first result (1-based)."""
        return self.offset + 1

    @property
    def last(self) -> int:
        return self.offset + (len(self.ids) if self.on_page is None else self.on_page)

    @property
    def has_next(self) -> bool:
        # Not counted yet: there are at least as many as the ranked window, beyond this page.
        return self.total is None or self.last < self.total


def search_page(
    project: Project,
    text: str,
    *,
    documents: bool = False,
    chunking: Chunking | None = None,
    page: int = 1,
    per_page: int = 30,
    count: bool = True,
) -> Found:
    """The ``page``-th page of what the search box finds, with the number of matches.

    Without ``count``, a number that would take a pass of its own over the matches is
    left out (``total`` None, ``at_least`` said): ``search_count`` gives it."""
    scope = _scope(project, documents, chunking)
    terms = split_terms(text)
    if scope is None or not terms:
        return Found([], 0, 0)
    offset = (page - 1) * per_page
    ids, total = matching_page(
        scope, terms, offset=offset, limit=per_page, cap=COUNT_LIMIT + 1, count=count
    )
    return Found(ids, total, offset, at_least=ranked_window(offset, per_page))


def search_count(
    project: Project,
    text: str,
    *,
    documents: bool = False,
    chunking: Chunking | None = None,
    page: int = 1,
    per_page: int = 30,
) -> Found:
    """What ``search_page`` says of the page's place among the matches and their number,
    without reading the page's rows: one capped count."""
    scope = _scope(project, documents, chunking)
    terms = split_terms(text)
    if scope is None or not terms:
        return Found([], 0, 0)
    offset = (page - 1) * per_page
    total = count_matching(scope, terms, COUNT_LIMIT + 1)
    return Found([], total, offset, on_page=max(min(per_page, total - offset), 0))
