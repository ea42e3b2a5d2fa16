"""trec_eval's measures that walk each query's ranked list: gains by grade, G, binG,
ndcg with gain parameters, ndcg_rel, Rndcg, rbp, rbp_resid, relative_P, set_relative_P,
unj, utility and relstring. Numpy only.

A query's *ranked list* is trec_eval's ``results_rel_list`` (``form_res_rels.c``): for
ranks 1 … n the grade of the result there, ``NONPOOL`` (−1) when the qrels do not hold it
and ``UNJUDGED`` (−2) when they hold it with a negative grade (pooled, not judged). The
*level counts* of a query are its number of judgments at each grade 0, 1, … (negative
grades not counted). A query's *gains* (``gain_init.c``) give each grade 0 … top a gain,
by default the grade itself, changed by ``level=gain`` parameters (``ndcg.1=3,2=9``); the
*ideal list* repeats each gain as often as the qrels hold its grade, from the largest
gain down, and ends at the first gain ≤ 0. Sums run in rank order, as trec_eval adds.
"""

from __future__ import annotations

import math
import re
from functools import cmp_to_key

import numpy as np

from .ranking import JudgedRows, safe_divide

NONPOOL = -1
UNJUDGED = -2
RBP_PERSISTENCE = 0.9  # m_rbp.c's default p


def ranked_lists(r: JudgedRows) -> tuple[np.ndarray, np.ndarray]:
    """``(start, rels)``: every query's ranked list end to end in ``rels`` (query q's is
    ``rels[start[q]:start[q + 1]]``, ``n_ret[q]`` long)."""
    if "lists" not in r.cache:
        n_ret = np.asarray(r.n_ret, dtype=np.int64)
        start = np.r_[0, np.cumsum(n_ret)]
        rels = np.full(int(start[-1]), NONPOOL, dtype=np.int64)
        rels[start[r.query] + r.rank - 1] = np.where(r.grade < 0, UNJUDGED, r.grade)
        r.cache["lists"] = (start, rels)
    return r.cache["lists"]


def level_counts(r: JudgedRows) -> np.ndarray:
    """Judgments per query (rows) and grade 0 … top (columns); negative grades left out."""
    if "levels" not in r.cache:
        judged = r.qrel_grade >= 0
        top = int(r.qrel_grade.max(initial=0)) + 1
        flat = r.qrel_query[judged] * top + r.qrel_grade[judged]
        counts = np.bincount(flat, minlength=r.n_queries * top)
        r.cache["levels"] = counts.reshape(r.n_queries, top)
    return r.cache["levels"]


def gain_table(counts: np.ndarray, pairs: tuple[tuple[str, float], ...]) -> list[tuple]:
    """``[(grade, gain, count)]`` for one query, smallest gain first (``setup_gains``):
    the ``grade=gain`` pairs whose grade is a whole number, then every grade 0 … the
    query's top grade not among them with gain = grade. Gains are ordered as trec_eval's
    comparison does it, by their difference cut to a whole number (4.5 ties 4)."""
    present = np.flatnonzero(counts)
    top = int(present[-1]) + 1 if present.size else 0
    table: list[list] = []
    for name, gain in pairs:
        if re.fullmatch(r"[+-]?\d+", name):
            table.append([int(name), float(gain), 0])
    for grade in range(top):
        for entry in table:
            if entry[0] == grade:
                entry[2] = int(counts[grade])
                break
        else:
            table.append([grade, float(grade), int(counts[grade])])
    table.sort(key=cmp_to_key(lambda a, b: int(a[1] - b[1])))
    return [tuple(entry) for entry in table]


def _gains_of(rels: np.ndarray, table: list[tuple]) -> np.ndarray:
    """Each ranked grade's gain; grades the table lacks (−1, −2 …) gain 0."""
    gains = np.zeros(rels.size)
    for grade, gain, _ in table:
        gains[rels == grade] = gain
    return gains


def _ideal(table: list[tuple]) -> np.ndarray:
    """The ideal list's gains: largest first, each as often as its grade is judged,
    ended before the first gain ≤ 0."""
    ideal = np.repeat([g for _, g, _ in reversed(table)], [c for _, _, c in reversed(table)])
    stop = np.flatnonzero(ideal <= 0)
    return ideal[: stop[0]] if stop.size else ideal


def _sequential(values: np.ndarray) -> np.ndarray:
    """Running sums with a 0 in front (C's left-to-right additions)."""
    return np.r_[0.0, np.cumsum(values)]


def _discounts(n: int) -> np.ndarray:
    return np.log2(np.arange(n) + 2.0)


def _per_query(r: JudgedRows, pairs, compute) -> np.ndarray:
    """``compute(rels, table, num_rel_level_counts)`` for every query."""
    start, rels = ranked_lists(r)
    counts = level_counts(r)
    out = np.zeros(r.n_queries)
    for q in range(r.n_queries):
        table = gain_table(counts[q], pairs)
        out[q] = compute(rels[start[q] : start[q + 1]], table, counts[q])
    return out


def ndcg_gains(r: JudgedRows, pairs) -> np.ndarray:
    """ndcg = Σ_i gain_i / log2(i + 1) ÷ Σ_j ideal_j / log2(j + 1), ranks from 1
    (``m_ndcg.c``, Järvelin & Kekäläinen 2002), with the query's gains."""

    def one(rels, table, counts):
        gains = _gains_of(rels, table)
        ideal = _ideal(table)
        ideal_dcg = _sequential(ideal / _discounts(ideal.size))[-1]
        dcg = _sequential(gains / _discounts(rels.size))[-1]
        return dcg / ideal_dcg if ideal_dcg > 0 else 0.0

    return _per_query(r, pairs, one)


def ndcg_rel(r: JudgedRows, pairs) -> np.ndarray:
    """ndcg averaged over the relevant documents (gain > 0, ``m_ndcg_rel.c``): with
    DCG_i and ideal IDCG_i over the first i ranks, P the ideal list's length and k the
    retrieved documents of positive gain, (Σ_{gain_i > 0} DCG_i / IDCG_min(i, P) +
    (P − k) · DCG_n / IDCG_P) / P; 0 when that is not positive."""

    def one(rels, table, counts):
        gains = _gains_of(rels, table)
        ideal = _ideal(table)
        if ideal.size == 0:
            return 0.0
        dcg = _sequential(gains / _discounts(rels.size))
        idcg = _sequential(ideal / _discounts(ideal.size))
        at = np.flatnonzero(gains > 0) + 1
        terms = dcg[at] / idcg[np.minimum(at, ideal.size)]
        total = _sequential(terms)[-1]
        total += (ideal.size - at.size) * dcg[-1] / idcg[-1]
        return total / ideal.size if total > 0 else 0.0

    return _per_query(r, pairs, one)


def rndcg(r: JudgedRows, pairs, rel: int) -> np.ndarray:
    """ndcg averaged at the R levels (``m_Rndcg.c``): at each rank c where the ideal
    gain changes (c counted from 0, the ideal list followed by a 0; before rank 0 the
    largest gain of the table), ndcg over the first c ranks, DCG_min(c, n) / IDCG_c
    (skipped while IDCG_c is 0); and, when the run outlasts the ideal list by more than
    one result, DCG_n / IDCG_P once more. The mean of those; 0 without relevant
    documents (grade ≥ rel)."""

    def one(rels, table, counts):
        if counts[rel:].sum() == 0:
            return 0.0
        n = rels.size
        gains = _gains_of(rels, table)
        ideal = _ideal(table)
        size = ideal.size
        dcg = _sequential(gains / _discounts(n))
        idcg = _sequential(ideal / _discounts(size))
        top = table[-1][1] if table else 0.0
        walk = np.r_[ideal, 0.0]  # ranks 0 … P: the gain there
        change = np.flatnonzero(walk != np.r_[top, walk[:-1]])
        change = change[idcg[change] > 0]
        terms = dcg[np.minimum(change, n)] / idcg[change]
        if size + 1 < n and idcg[size] > 0:
            terms = np.r_[terms, dcg[n] / idcg[size]]
        if terms.size == 0:
            return math.nan
        return _sequential(terms)[-1] / terms.size

    return _per_query(r, pairs, one)


def g_measure(r: JudgedRows, pairs) -> np.ndarray:
    """G (``m_G.c``): Σ_i gain_i / log2(2 + cost_i − got_i) ÷ Σ ideal, where got_i sums
    the gains of ranks ≤ i and cost_i sums max(ideal gain at rank j, 1) over j ≤ i (1
    past the ideal list)."""

    def one(rels, table, counts):
        n = rels.size
        gains = _gains_of(rels, table)
        ideal = _ideal(table)
        sum_ideal = _sequential(ideal)[-1]
        if not sum_ideal > 0:
            return 0.0
        cost = np.ones(n)
        shared = min(n, ideal.size)
        cost[:shared] = np.maximum(ideal[:shared], 1.0)
        sum_cost = np.cumsum(cost)
        sum_got = np.cumsum(gains)
        terms = np.zeros(n)
        nonzero = gains != 0
        terms[nonzero] = gains[nonzero] / np.log2((2.0 + sum_cost[nonzero]) - sum_got[nonzero])
        return _sequential(terms[nonzero])[-1] / sum_ideal

    return _per_query(r, pairs, one)


def _persistence(pairs) -> float:
    p = RBP_PERSISTENCE
    for name, value in pairs:
        if name == "p":
            p = float(value)
    return p


def _powers(p: float, n: int) -> np.ndarray:
    """1, p, p·p, … (n + 1 values), multiplied one at a time as trec_eval does."""
    return np.r_[1.0, np.cumprod(np.full(n, p))]


def rbp(r: JudgedRows, pairs) -> np.ndarray:
    """Rank-biased precision (Moffat & Zobel, TOIS 2008; ``m_rbp.c``):
    (1 − p) Σ_i gain_i · p^(i−1), p = 0.9 unless ``p=`` is given; gains outside [0, 1]
    are rescaled to (gain − min) / (max − min)."""
    p = _persistence(pairs)

    def one(rels, table, counts):
        gains = [g for _, g, _ in table]
        if gains and (min(gains) < 0 or max(gains) > 1):
            low, high = min(gains), max(gains)
            table = [(grade, (g - low) / (high - low), c) for grade, g, c in table]
        weighted = _gains_of(rels, table) * _powers(p, rels.size)[:-1]
        return (1.0 - p) * _sequential(weighted[weighted != 0])[-1]

    return _per_query(r, pairs, one)


def rbp_resid(r: JudgedRows, pairs) -> np.ndarray:
    """RBP's residual (``m_rbp_resid.c``): p^n + (1 − p) Σ_{unjudged i} p^(i−1), the
    most RBP could rise if every unjudged result had gain 1; 0 when every result is
    judged."""
    p = _persistence(pairs)
    start, rels = ranked_lists(r)
    out = np.zeros(r.n_queries)
    for q in range(r.n_queries):
        ranked = rels[start[q] : start[q + 1]]
        powers = _powers(p, ranked.size)
        unjudged = ranked < 0
        if unjudged.any():
            out[q] = powers[-1] + (1 - p) * _sequential(powers[:-1][unjudged])[-1]
    return out


def bin_g(r: JudgedRows, rel: int) -> np.ndarray:
    """binG (``m_binG.c``): Σ_{relevant retrieved} 1 / log2(2 + non-relevant above it)
    ÷ R."""
    relevant = r.relevant(rel)
    above = r.rank - r.cum_relevant(rel)
    total = r.count(relevant, 1.0 / np.log2(2.0 + above))
    return safe_divide(total, r.num_rel(rel))


def relative_p(r: JudgedRows, cutoff: int, rel: int) -> np.ndarray:
    """relative_P@k = relevant in the top k / min(k, R), 0 when R = 0 (``m_rel_P.c``)."""
    hits = r.count(r.top(cutoff) & r.relevant(rel))
    return safe_divide(hits, np.minimum(float(cutoff), r.num_rel(rel)))


def set_relative_p(r: JudgedRows, rel: int) -> np.ndarray:
    """set_relative_P = relevant retrieved / min(retrieved, R) (``m_set_rel_P.c``)."""
    hits = r.count(r.relevant(rel))
    return safe_divide(hits, np.minimum(r.n_ret.astype(float), r.num_rel(rel)))


def unjudged(r: JudgedRows, cutoff: int) -> np.ndarray:
    """unj@k = results in the top k without a grade ≥ 0 / k (``m_unjudged.c``)."""
    judged = r.count(r.top(cutoff) & (r.grade >= 0))
    return (np.minimum(r.n_ret, cutoff) - judged) / cutoff


def utility(r: JudgedRows, weights: tuple[float, ...], rel: int, collection: int) -> np.ndarray:
    """utility = w1·a + w2·b + w3·c + w4·d over the contingency table (``m_utility.c``):
    a relevant retrieved, b non-relevant retrieved, c relevant not retrieved, d the rest
    of a collection of ``collection`` documents (``-N``)."""
    w1, w2, w3, w4 = weights
    a = r.count(r.relevant(rel))
    ret = r.n_ret.astype(float)
    num_rel = r.num_rel(rel)
    return w1 * a + w2 * (ret - a) + w3 * (num_rel - a) + w4 * (collection + a - ret - num_rel)


def relstring(r: JudgedRows, length: int) -> list[str]:
    """The first ``length`` ranked grades of each query as text (``m_relstring.c``):
    0–9 as digits, ``>`` above 9, ``-`` not in the qrels, ``.`` pooled but unjudged."""
    start, rels = ranked_lists(r)
    out = []
    for q in range(r.n_queries):
        ranked = rels[start[q] : start[q] + min(max(length, 0), start[q + 1] - start[q])]
        out.append("".join(_char(int(v)) for v in ranked))
    return out


def _char(grade: int) -> str:
    if grade > 9:
        return ">"
    if grade >= 0:
        return str(grade)
    return {NONPOOL: "-", UNJUDGED: "."}.get(grade, "<")
