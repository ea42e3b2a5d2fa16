"""BM25 retrieval over any set of texts, in numpy, for English and Chinese.

Tokens (``numerics.words``): lower-cased runs of letters/digits for alphabetic scripts
(minus the English stop words), and for Chinese, which has no spaces, every Han character
plus every pair of adjacent Han characters (unigrams + bigrams, segmenter-free indexing).

Scoring is Okapi BM25 with Lucene's idf (Robertson & Zaragoza 2009, "The Probabilistic
Relevance Framework: BM25 and Beyond", eq. 3.18; Lucene BM25Similarity):

    score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
    idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

with k1 = 1.2 and b = 0.75 by default. Everything after tokenisation is array work over
all queries of a batch at once (postings joined with ``np.repeat``/``searchsorted``,
scores summed with ``np.bincount``, top-k with ``argpartition``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .words import STOP_WORDS, words


def tokenize(text: str) -> list[str]:
    """Index terms of ``text``: words (English, lower-cased, no stop words) and Han uni/bigrams."""
    terms: list[str] = []
    for word, is_han in words(text.lower()):
        if is_han:
            terms.extend(word)
            terms.extend(word[i : i + 2] for i in range(len(word) - 1))
        elif word not in STOP_WORDS:
            terms.append(word)
    return terms


@dataclass(frozen=True)
class Bm25Index:
    """Postings sorted by term: for term t, rows ``term_start[t]:term_start[t+1]``."""

    vocabulary: dict[str, int]
    posting_doc: np.ndarray  # int64, document index of each posting
    posting_weight: np.ndarray  # float64, the BM25 tf part × idf of each posting
    term_start: np.ndarray  # int64, len(vocabulary) + 1
    n_docs: int


def build_index(texts: list[str], k1: float = 1.2, b: float = 0.75) -> Bm25Index:
    """Tokenise every text and precompute each posting's BM25 weight."""
    vocabulary: dict[str, int] = {}
    term_ids: list[int] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for index, text in enumerate(texts):
        terms = tokenize(text)
        lengths[index] = len(terms)
        term_ids.extend(vocabulary.setdefault(term, len(vocabulary)) for term in terms)
    doc_of_token = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    term_of_token = np.asarray(term_ids, dtype=np.int64)
    n_terms = len(vocabulary)
    # One posting per distinct (term, doc): sort by term then doc and count runs.
    key = term_of_token * max(len(texts), 1) + doc_of_token
    key, tf = np.unique(key, return_counts=True)
    posting_term = key // max(len(texts), 1)
    posting_doc = key % max(len(texts), 1)
    df = np.bincount(posting_term, minlength=n_terms)
    n_docs = len(texts)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    avgdl = lengths.mean() if n_docs and lengths.sum() else 1.0
    norm = k1 * (1.0 - b + b * lengths[posting_doc] / avgdl)
    weight = idf[posting_term] * tf * (k1 + 1.0) / (tf + norm)
    term_start = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=term_start[1:])
    return Bm25Index(vocabulary, posting_doc, weight, term_start, n_docs)


def search(
    index: Bm25Index, queries: list[str], k: int = 100, batch_cells: int = 20_000_000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-``k`` documents of every query: (query index, doc index, score) arrays.

    Results are ordered by query, then score descending, then doc index ascending;
    documents sharing no term with a query are not returned.
    """
    out_q, out_d, out_s = [], [], []
    batch = max(1, batch_cells // max(index.n_docs, 1))
    for first in range(0, len(queries), batch):
        q, d, s = _search_batch(index, queries[first : first + batch], k)
        out_q.append(q + first)
        out_d.append(d)
        out_s.append(s)
    if not out_q:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    return np.concatenate(out_q), np.concatenate(out_d), np.concatenate(out_s)


def _search_batch(index: Bm25Index, queries: list[str], k: int):
    query_of, term_of = [], []
    for qi, text in enumerate(queries):
        ids = [index.vocabulary[t] for t in tokenize(text) if t in index.vocabulary]
        query_of.extend([qi] * len(ids))
        term_of.extend(ids)
    query_of = np.asarray(query_of, dtype=np.int64)
    term_of = np.asarray(term_of, dtype=np.int64)
    starts = index.term_start[term_of]
    counts = index.term_start[term_of + 1] - starts
    # Expand every (query, term) into the term's postings without a Python loop.
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(term_of)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    postings = starts[owner] + offsets
    cell = query_of[owner] * index.n_docs + index.posting_doc[postings]
    scores = np.bincount(
        cell, weights=index.posting_weight[postings], minlength=len(queries) * index.n_docs
    ).reshape(len(queries), index.n_docs)
    kk = min(k, index.n_docs)
    if kk == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    top = np.argpartition(-scores, kk - 1, axis=1)[:, :kk]
    top_scores = np.take_along_axis(scores, top, axis=1)
    order = np.lexsort((top, -top_scores), axis=1)
    top = np.take_along_axis(top, order, axis=1)
    top_scores = np.take_along_axis(top_scores, order, axis=1)
    q = np.repeat(np.arange(len(queries)), kk)
    d, s = top.ravel(), top_scores.ravel()
    keep = s > 0
    return q[keep], d[keep], s[keep]
