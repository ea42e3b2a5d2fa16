"""Nuggets as subtopics: which units cover which nuggets, nugget recall at k, agreement. Numpy only.

A nugget is one fact a good answer needs, tied to one or more evidence spans of the corpus
that state it. A unit (a chunk, a page, a document) *covers* a nugget when one of the
nugget's spans reaches the unit under the mapping policy — the rule that maps labels onto
units (``numerics.mapping.map_pairs``): so a nugget's coverage is exact for any chunking.
Covering pairs are subtopic qrels in ndeval's sense (``qid subtopic docid rel``), which is
how the diversity measures of ``numerics.diversity`` read them.

Queries are numbered 0..n_queries-1, nuggets 0..n_nuggets-1 (in each query's nugget
order), items coded so that code order is the ids' byte order (``numerics.id_order``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .mapping import MappingPolicy, candidate_pairs, map_pairs
from .spans import SpanArrays


def covering_pairs(
    evidence_nugget, evidence: SpanArrays, units: SpanArrays, *, policy: MappingPolicy
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(nugget, unit)`` pairs, sorted, where an evidence span of the nugget
    reaches the unit under ``policy`` (``map_pairs``). ``evidence_nugget`` gives each
    evidence row's nugget."""
    evidence_nugget = np.asarray(evidence_nugget, dtype=np.int64)
    row, unit = map_pairs(evidence, units, policy=policy)
    if row.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    width = len(units) or 1
    keys = np.unique(evidence_nugget[row] * width + unit)
    return keys // width, keys % width


@dataclass(frozen=True)
class Subtopics:
    """A query set's nuggets as subtopic qrels.

    ``nugget_query[n]`` is nugget n's query, ``vital[n]`` whether it is vital;
    ``pair_nugget``/``pair_item`` list every (nugget, covering item) pair. A nugget no item
    covers is still a nugget of its query (nugget recall counts it; ndeval's measures,
    which only see the qrels, do not).
    """

    n_queries: int
    nugget_query: np.ndarray
    vital: np.ndarray
    pair_nugget: np.ndarray
    pair_item: np.ndarray

    def __post_init__(self) -> None:
        for name in ("nugget_query", "pair_nugget", "pair_item"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        object.__setattr__(self, "vital", np.asarray(self.vital, dtype=bool))
        if self.nugget_query.size != self.vital.size:
            raise ValueError("nugget_query and vital must have one entry per nugget")
        if self.pair_nugget.size != self.pair_item.size:
            raise ValueError("pair_nugget and pair_item must have the same length")

    @property
    def n_nuggets(self) -> int:
        return int(self.nugget_query.size)

    @property
    def pair_query(self) -> np.ndarray:
        return self.nugget_query[self.pair_nugget]

    def per_query(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Number of nuggets (where ``mask`` holds) of every query."""
        query = self.nugget_query if mask is None else self.nugget_query[mask]
        return np.bincount(query, minlength=self.n_queries).astype(float)

    def covered_somewhere(self) -> np.ndarray:
        """Per nugget: whether some item covers it (ndeval's "actual" subtopics)."""
        found = np.zeros(self.n_nuggets, dtype=bool)
        found[self.pair_nugget] = True
        return found


@dataclass(frozen=True)
class Hits:
    """Every ranked item that covers a nugget: (query, 1-based rank, nugget, item) rows,
    sorted by query, rank, nugget."""

    query: np.ndarray
    rank: np.ndarray
    nugget: np.ndarray
    item: np.ndarray


def ranks_within(query: np.ndarray) -> np.ndarray:
    """1-based position of each row within its query (rows grouped by query, in rank order)."""
    query = np.asarray(query, dtype=np.int64)
    if query.size == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    return np.arange(query.size) - np.repeat(start, np.diff(np.r_[start, query.size])) + 1


def covered_hits(subtopics: Subtopics, run_query, run_item, run_rank) -> Hits:
    """Join ranked run rows (query, item code, 1-based rank) with the covering pairs."""
    run_query, run_item, run_rank = (
        np.asarray(a, dtype=np.int64) for a in (run_query, run_item, run_rank)
    )
    empty = np.zeros(0, dtype=np.int64)
    if subtopics.pair_item.size == 0 or run_query.size == 0:
        return Hits(empty, empty, empty, empty)
    width = int(max(subtopics.pair_item.max(), run_item.max())) + 1
    pair_key = subtopics.pair_query * width + subtopics.pair_item
    order = np.argsort(pair_key, kind="stable")
    pair_key = pair_key[order]
    run_key = run_query * width + run_item
    lo = np.searchsorted(pair_key, run_key, side="left")
    counts = np.searchsorted(pair_key, run_key, side="right") - lo
    total = int(counts.sum())
    if total == 0:
        return Hits(empty, empty, empty, empty)
    row = np.repeat(np.arange(run_key.size), counts)
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    pair = order[np.repeat(lo, counts) + within]
    query, rank, nugget = run_query[row], run_rank[row], subtopics.pair_nugget[pair]
    sort = np.lexsort((nugget, rank, query))
    return Hits(query[sort], rank[sort], nugget[sort], run_item[row][sort])


def first_covered_rank(subtopics: Subtopics, hits: Hits) -> np.ndarray:
    """Per nugget: the best rank of an item covering it, 0 when no ranked item does."""
    best = np.full(subtopics.n_nuggets, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, hits.nugget, hits.rank)
    best[best == np.iinfo(np.int64).max] = 0
    return best


def nugget_recall(
    subtopics: Subtopics, first_rank: np.ndarray, k: int, *, vital_only: bool = False
) -> np.ndarray:
    """NuggetRecall@k per query = |{n ∈ N_q : some item ranked ≤ k covers n}| / |N_q|,
    N_q the query's nuggets (its vital ones for ``NuggetRecall(vital)``), counted whether
    or not any unit of the level covers them; NaN where N_q is empty (left out).

    The "contextual recall" of RAG evaluation (share of the information points the
    question needs that the retrieved context covers), over nuggets as in TREC RAG 2024's
    AutoNuggetizer (Pradeep et al., 2024), with coverage through evidence spans.
    """
    mask = subtopics.vital if vital_only else np.ones(subtopics.n_nuggets, dtype=bool)
    total = subtopics.per_query(mask)
    hit = mask & (first_rank > 0) & (first_rank <= k)
    covered = subtopics.per_query(hit)
    out = np.full(subtopics.n_queries, np.nan)
    np.divide(covered, total, out=out, where=total > 0)
    return out


# ------------------------------------------------------------------ measure names
NUGGET_FAMILIES = ("NuggetRecall", "StRecall", "alpha_nDCG", "ERR_IA")
DEFAULT_ALPHA = 0.5
_NAME = re.compile(r"^(?P<family>[A-Za-z_]+)(?:\((?P<params>[^)]*)\))?@(?P<k>\d+)$")
# trec_eval-style names (``measure.k``), as ``export_metrics`` and ``evaluate`` print them.
_TREC = re.compile(r"^(?P<name>nugget_recall|vital_nugget_recall)\.(?P<k>\d+)$")


@dataclass(frozen=True)
class NuggetMeasure:
    """A parsed nugget measure: ``NuggetRecall@10``, ``NuggetRecall(vital)@10``,
    ``StRecall@10``, ``alpha_nDCG@10``, ``alpha_nDCG(alpha=0.7)@10``, ``ERR_IA@10``, or the
    trec_eval-style ``nugget_recall.10`` / ``vital_nugget_recall.10``. ``name`` is kept as
    given (results are keyed by it)."""

    name: str
    family: str
    cutoff: int
    vital: bool = False
    alpha: float = DEFAULT_ALPHA


def is_nugget_measure(name: str) -> bool:
    """Whether ``name`` names a nugget measure (well formed or not): its family is one."""
    text = str(name).strip()
    return bool(_TREC.match(text)) or any(
        re.match(rf"^{family}(\(|@|$)", text) for family in NUGGET_FAMILIES
    )


def parse_nugget_measure(name: str) -> NuggetMeasure:
    """Read a nugget measure's name; ``ValueError`` saying what is wrong otherwise."""
    text = str(name).strip()
    trec = _TREC.match(text)
    if trec:
        k = int(trec["k"])
        if k < 1:
            raise ValueError("the cutoff must be at least 1")
        return NuggetMeasure(text, "NuggetRecall", k, vital=trec["name"].startswith("vital"))
    match = _NAME.match(text)
    if not match or match["family"] not in NUGGET_FAMILIES:
        raise ValueError(
            f"cannot read nugget measure {name!r}; write NuggetRecall@10, "
            "NuggetRecall(vital)@10, StRecall@10, alpha_nDCG@10, alpha_nDCG(alpha=0.7)@10, "
            "ERR_IA@10, nugget_recall.10 or vital_nugget_recall.10"
        )
    family, k = match["family"], int(match["k"])
    if k < 1:
        raise ValueError("the cutoff must be at least 1")
    params = [p.strip() for p in (match["params"] or "").split(",") if p.strip()]
    vital, alpha = False, DEFAULT_ALPHA
    for param in params:
        if family == "NuggetRecall" and param == "vital":
            vital = True
        elif family == "alpha_nDCG" and re.fullmatch(r"alpha\s*=\s*[0-9]*\.?[0-9]+", param):
            alpha = float(param.split("=")[1])
            if not 0 <= alpha <= 1:
                raise ValueError(f"alpha must lie in [0, 1] in {name!r}")
        else:
            raise ValueError(f"unknown parameter {param!r} of {family} in {name!r}")
    return NuggetMeasure(text, family, k, vital, alpha)


def evaluate_nuggets(
    subtopics: Subtopics, run_query, run_item, run_rank, measures
) -> dict[str, np.ndarray]:
    """Per-query values (float64, length ``n_queries``) of each nugget measure by name.

    The run is given as ranked rows (query, item code, 1-based rank); a query the run does
    not retrieve for scores 0. NuggetRecall is NaN for a query without (vital) nuggets;
    the ndeval measures (``numerics.diversity``) are 0 where no item covers any nugget.
    """
    from . import diversity

    parsed = [m if isinstance(m, NuggetMeasure) else parse_nugget_measure(m) for m in measures]
    hits = covered_hits(subtopics, run_query, run_item, run_rank)
    first = first_covered_rank(subtopics, hits)
    # ndeval's greedy ideal once per alpha, as deep as the deepest cutoff asks.
    depth: dict[float, int] = {}
    for m in parsed:
        if m.family == "alpha_nDCG":
            depth[m.alpha] = max(depth.get(m.alpha, 0), m.cutoff)
    ideal = {a: diversity.ideal_gains(subtopics, k, a) for a, k in depth.items()}
    values: dict[str, np.ndarray] = {}
    for m in parsed:
        if m.family == "NuggetRecall":
            values[m.name] = nugget_recall(subtopics, first, m.cutoff, vital_only=m.vital)
        elif m.family == "StRecall":
            values[m.name] = diversity.subtopic_recall(subtopics, first, m.cutoff)
        elif m.family == "alpha_nDCG":
            values[m.name] = diversity.alpha_ndcg(
                subtopics, hits, m.cutoff, m.alpha, ideal=ideal[m.alpha]
            )
        else:
            values[m.name] = diversity.err_ia(subtopics, hits, m.cutoff)
    return values


# ------------------------------------------------------------------ agreement
@dataclass(frozen=True)
class NuggetSpans:
    """One person's nuggets with their evidence: ``nugget_query`` per nugget (any query
    key, compared between the two sides), and per evidence row its ``nugget`` and span."""

    nugget_query: np.ndarray
    nugget: np.ndarray
    spans: SpanArrays


def matched_nuggets(a: NuggetSpans, b: NuggetSpans) -> tuple[np.ndarray, np.ndarray]:
    """Per nugget of ``a`` and of ``b``: whether a nugget of the other side, on the same
    query, has an evidence span sharing at least one character with one of its own.

    Two people who wrote nuggets independently rarely select the same characters; a
    shared character of evidence on the same query is what says "the same fact, found in
    the same place" without asking for byte-identical spans.
    """
    a_query = np.asarray(a.nugget_query, dtype=np.int64)
    b_query = np.asarray(b.nugget_query, dtype=np.int64)
    a_hit = np.zeros(a_query.size, dtype=bool)
    b_hit = np.zeros(b_query.size, dtype=bool)
    ev_a, ev_b, _overlap = candidate_pairs(a.spans, b.spans)
    if ev_a.size:
        na = np.asarray(a.nugget, dtype=np.int64)[ev_a]
        nb = np.asarray(b.nugget, dtype=np.int64)[ev_b]
        same = a_query[na] == b_query[nb]
        a_hit[na[same]] = True
        b_hit[nb[same]] = True
    return a_hit, b_hit
