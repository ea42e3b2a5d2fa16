"""Diversity measures over nuggets as subtopics, exactly as ndeval computes them. Numpy only.

Source: ndeval 4.5 (TREC Web track, Clarke et al.), as ir_measures' ``pyndeval`` provider
runs it (``StRecall``, ``alpha_nDCG``, ``ERR_IA``; tests cross-check on random subtopic
qrels). With S the query's subtopics that some judged item covers ("actual" subtopics),
rel_{i,s} = 1 when the item at rank i covers subtopic s, and c_{i,s} the number of items
above rank i covering s:

- ``StRecall@k``  = |{s : rel_{i,s} for some i ≤ k}| / |S|               (``computeSTRecall``)
- ``alpha_nDCG@k`` = Σ_{i≤k} g_i·d_i / Σ_{i≤k} g*_i·d_i, g_i = Σ_s rel_{i,s}(1−α)^{c_{i,s}},
  d_i = log 2 / log(i + 1), g* the gains of ndeval's greedy ideal ranking: at each rank
  the unplaced item of greatest gain, ties to the greatest id (``idealResult``,
  ``computeDCG``, ``renormalize``);
- ``ERR_IA@k`` = Σ_{i≤k} g_i / i ÷ Σ_{i≤k} |S|(1−α)^{i−1} / i with α = 0.5 ("ideal ideal"
  normalisation, ``computeERR``). ndeval's normalising loop starts at the second rank, so
  ``ERR_IA@1`` is g_1 itself, not divided by |S|: kept, so that the values are ndeval's.

All are 0 for a query none of whose subtopics an item covers. ndeval binarises
relevance and stops at rank 20; these functions take any cutoff. Ties of score in a run
are broken as everywhere in Assay (trec_eval's order), pyndeval breaks them by id
ascending: on tied scores the two may rank differently.
"""

from __future__ import annotations

import numpy as np

from .nuggets import DEFAULT_ALPHA, Hits, Subtopics


def _discount(rank: np.ndarray) -> np.ndarray:
    """ndeval's ``discount``: log 2 / log(rank + 1) for 1-based ranks."""
    return np.log(2.0) / np.log(np.asarray(rank, dtype=float) + 1.0)


def actual_subtopics(subtopics: Subtopics) -> np.ndarray:
    """|S| per query: its nuggets that some judged item covers."""
    return subtopics.per_query(subtopics.covered_somewhere())


def subtopic_recall(subtopics: Subtopics, first_rank: np.ndarray, k: int) -> np.ndarray:
    """``StRecall@k`` per query (see the module docstring); ``first_rank`` from
    ``numerics.nuggets.first_covered_rank``."""
    actual = actual_subtopics(subtopics)
    covered = subtopics.per_query((first_rank > 0) & (first_rank <= k))
    out = np.zeros(subtopics.n_queries)
    np.divide(covered, actual, out=out, where=actual > 0)
    return out


def _gains(hits: Hits, alpha: float) -> np.ndarray:
    """(1 − α)^c for every hit, c the hits of the same nugget at better ranks."""
    if hits.nugget.size == 0:
        return np.zeros(0)
    order = np.lexsort((hits.rank, hits.nugget))
    nugget = hits.nugget[order]
    start = np.flatnonzero(np.r_[True, nugget[1:] != nugget[:-1]])
    seen = np.arange(nugget.size) - np.repeat(start, np.diff(np.r_[start, nugget.size]))
    gain = np.empty(nugget.size)
    gain[order] = (1.0 - alpha) ** seen
    return gain


def _rank_gains(subtopics: Subtopics, hits: Hits, k: int, alpha: float):
    """(query, rank, gain) of every rank ≤ k holding a covering item: g_i summed over its
    subtopics in nugget order (as ndeval sums them)."""
    gain = _gains(hits, alpha)
    top = hits.rank <= k
    query, rank, gain = hits.query[top], hits.rank[top], gain[top]
    if query.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    width = int(k) + 1
    key = query * width + rank
    new = np.r_[True, key[1:] != key[:-1]]  # hits are sorted by query, rank, nugget
    group = np.cumsum(new) - 1
    total = np.bincount(group, weights=gain)
    return query[new], rank[new], total


def ideal_gains(subtopics: Subtopics, depth: int, alpha: float) -> np.ndarray:
    """Gains g*_1..g*_depth of ndeval's greedy ideal ranking, one row per query.

    All queries at once, one step per rank: every unplaced covering item's gain is summed
    over its subtopics (in nugget order), each query places its item of greatest gain
    (ties: the greatest item code, as ndeval's ``strcmp`` on ids) and that item's subtopics
    lose a factor 1 − α. Items covering no subtopic add nothing, so only covering items
    take part.
    """
    out = np.zeros((subtopics.n_queries, depth))
    if subtopics.pair_item.size == 0 or depth < 1:
        return out
    query = subtopics.pair_query
    order = np.lexsort((subtopics.pair_nugget, subtopics.pair_item, query))
    query, item = query[order], subtopics.pair_item[order]
    nugget = subtopics.pair_nugget[order]
    new = np.r_[True, (query[1:] != query[:-1]) | (item[1:] != item[:-1])]
    group = np.cumsum(new) - 1
    group_query = query[new]  # groups are sorted by query, then item ascending
    n_groups = int(group_query.size)
    first = np.flatnonzero(np.r_[True, group_query[1:] != group_query[:-1]])
    size = np.diff(np.r_[first, n_groups])
    owner = np.repeat(np.arange(first.size), size)  # each group's block of queries
    position = np.arange(n_groups)
    state = np.ones(subtopics.n_nuggets)
    placed = np.zeros(n_groups, dtype=bool)
    for step in range(min(depth, int(size.max()))):
        score = np.bincount(group, weights=state[nugget], minlength=n_groups)
        score[placed] = -1.0
        # Per query, the greatest score; of equal ones the last group, whose item code
        # is the greatest (ndeval breaks ties by id).
        best = np.maximum.reduceat(score, first)
        at_best = np.where(score == best[owner], position, -1)
        chosen = np.maximum.reduceat(at_best, first)
        chosen = chosen[score[chosen] >= 0]
        if chosen.size == 0:
            break
        out[group_query[chosen], step] = score[chosen]
        placed[chosen] = True
        taken = np.zeros(n_groups, dtype=bool)
        taken[chosen] = True
        state[nugget[taken[group]]] *= 1.0 - alpha
    return out
    query = subtopics.pair_query
    order = np.lexsort((subtopics.pair_nugget, subtopics.pair_item, query))
    query, item = query[order], subtopics.pair_item[order]
    nugget = subtopics.pair_nugget[order]
    new = np.r_[True, (query[1:] != query[:-1]) | (item[1:] != item[:-1])]
    group = np.cumsum(new) - 1
    group_query, group_item = query[new], item[new]
    n_groups = int(group_query.size)
    state = np.ones(subtopics.n_nuggets)
    placed = np.zeros(n_groups, dtype=bool)
    for step in range(min(depth, n_groups)):
        score = np.bincount(group, weights=state[nugget], minlength=n_groups)
        score[placed] = -1.0
        best = np.lexsort((group_item, score, group_query))
        last = np.r_[group_query[best][1:] != group_query[best][:-1], True]
        chosen = best[last]
        chosen = chosen[score[chosen] >= 0]
        if chosen.size == 0:
            break
        out[group_query[chosen], step] = score[chosen]
        placed[chosen] = True
        hit = np.isin(group, chosen)
        state[nugget[hit]] *= 1.0 - alpha
    return out


def alpha_ndcg(
    subtopics: Subtopics,
    hits: Hits,
    k: int,
    alpha: float = DEFAULT_ALPHA,
    *,
    ideal: np.ndarray | None = None,
) -> np.ndarray:
    """``alpha_nDCG@k`` per query (see the module docstring). ``ideal``: the result of
    ``ideal_gains(subtopics, ≥ k, alpha)`` when already computed."""
    query, rank, gain = _rank_gains(subtopics, hits, k, alpha)
    dcg = np.bincount(query, weights=gain * _discount(rank), minlength=subtopics.n_queries)
    ideal = ideal_gains(subtopics, k, alpha) if ideal is None else ideal[:, :k]
    best = (ideal * _discount(np.arange(1, ideal.shape[1] + 1))).sum(axis=1)
    out = np.zeros(subtopics.n_queries)
    np.divide(dcg, best, out=out, where=(dcg > 0) & (best > 0))
    return out


def err_ia(subtopics: Subtopics, hits: Hits, k: int) -> np.ndarray:
    """``ERR_IA@k`` per query, α = 0.5 as ir_measures runs ndeval (see the module
    docstring, also for rank 1)."""
    alpha = DEFAULT_ALPHA
    query, rank, gain = _rank_gains(subtopics, hits, k, alpha)
    err = np.bincount(query, weights=gain / rank, minlength=subtopics.n_queries)
    if k == 1:
        return err
    actual = actual_subtopics(subtopics)
    ranks = np.arange(1, k + 1, dtype=float)
    norm = actual * ((1.0 - alpha) ** (ranks - 1) / ranks).sum()
    out = np.zeros(subtopics.n_queries)
    np.divide(err, norm, out=out, where=norm > 0)
    return out
