"""Evidence spans → grades on any set of units (chunks, pages, documents). Numpy only.

Evidence is a half-open character span ``[start, end)`` of a document with a grade; a unit
is another span of the same documents (a chunk of a chunking, a page, a whole document).
Which units an evidence span grades is a *mapping policy*:

- ``contains``               the unit contains the whole evidence span;
- ``evidence_overlap>=θ``    overlap ≥ θ × evidence length;
- ``chunk_overlap>=θ``       overlap ≥ θ × unit length;
- ``any_overlap``            any overlap (at least one character).

In every policy the overlap must be at least one character: spans that only touch
(``a.end == b.start``) do not overlap. The one exception is an empty span: it carries no
text, so it grades exactly the units with the very same (empty) span, under every policy —
a whole-document label on a document without text reaches that document (and its one
empty page), as trec_eval counts such a judgement; an empty span reaches nothing else. A
unit's grade is the max over the evidence that qualifies for it (``best_evidence``, the
one place this rule is applied: gold grades, adjudications, the labelling screen's
covering grade); a unit reached only by grade-0 evidence is judged non-relevant (0); a
unit reached by nothing is unjudged (-1).

Vectorised: units are sorted by (document, start); for each evidence span two
``searchsorted`` calls bound the candidate units (the first whose running max of ``end``
passes the evidence start, the first starting at or after the evidence end) and the
candidate ranges are expanded with ``repeat``/``cumsum``; no Python loop per span.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .spans import SpanArrays

RULES = ("contains", "evidence_overlap", "chunk_overlap", "any_overlap")
UNJUDGED = -1


@dataclass(frozen=True)
class MappingPolicy:
    rule: str = "any_overlap"
    theta: float | None = None

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"unknown mapping rule {self.rule!r}; use one of {', '.join(RULES)}")
        needs_theta = self.rule in ("evidence_overlap", "chunk_overlap")
        if needs_theta and (self.theta is None or not 0 < self.theta <= 1):
            raise ValueError(f"{self.rule} needs a threshold θ in (0, 1], e.g. {self.rule}>=0.5")
        if not needs_theta and self.theta is not None:
            raise ValueError(f"{self.rule} takes no threshold")

    @classmethod
    def parse(cls, text: str) -> MappingPolicy:
        """``contains``, ``any_overlap``, ``evidence_overlap>=0.5``, ``chunk_overlap>=0.5``."""
        match = re.fullmatch(r"\s*([a-z_]+)\s*(?:>=\s*([0-9]*\.?[0-9]+))?\s*", text or "")
        if not match:
            raise ValueError(
                f"cannot read mapping policy {text!r}; use contains, any_overlap, "
                "evidence_overlap>=θ or chunk_overlap>=θ"
            )
        theta = float(match.group(2)) if match.group(2) is not None else None
        return cls(match.group(1), theta)

    def __str__(self) -> str:
        return self.rule if self.theta is None else f"{self.rule}>={self.theta:g}"


def _as_int(*arrays):
    return [np.asarray(a, dtype=np.int64).ravel() for a in arrays]


def _threshold(theta: float) -> tuple[int, int]:
    """θ as an exact fraction num/den, so ``overlap ≥ θ·length`` is tested in integers
    (``overlap·den ≥ num·length``): θ = 0.3 of 10 characters is exactly 3, not
    3.0000000000000004 as in floating point."""
    fraction = Fraction(repr(theta)).limit_denominator(1_000_000)
    return fraction.numerator, fraction.denominator


def _by_document_and_start(document: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The stable order of units by (document, start): ``np.lexsort``'s, found with one
    linear pass when the units already come in that order (a level's units usually do;
    sorting 4.5 million of them took 0.5 s on every mapping)."""

    def in_order(document: np.ndarray, start: np.ndarray) -> bool:
        step = np.diff(document)
        return not ((step < 0) | ((step == 0) & (np.diff(start) < 0))).any()

    # The first thousand units settle most unsorted levels before the whole pass.
    if in_order(document[:1000], start[:1000]) and in_order(document, start):
        return np.arange(document.size)
    return np.lexsort((start, document))


def _units_of_documents(unit_doc: np.ndarray, ev_doc: np.ndarray) -> np.ndarray | None:
    """The indexes (ascending) of the units in the evidence's documents, when they are
    few; None for "all of them". Only units of the same document can share a character,
    and the evidence of a few changed queries touches a few hundred of a level's
    millions of units: every later pass then runs over those alone (one query's
    mapping over 4.5 million chunks: 0.35 s before)."""
    if ev_doc.size * 4 > unit_doc.size:
        return None
    inside = np.isin(unit_doc, ev_doc)
    kept = np.flatnonzero(inside)
    return kept if kept.size * 2 <= unit_doc.size else None


class _Candidates:
    """Every (evidence, unit) pair of the same document sharing at least one character.

    ``evidence`` indexes the evidence arrays, ``position`` the units sorted by
    (document, start) — ``order[position]`` is the caller's unit index — and ``overlap``
    is the shared length in characters. Pairs come grouped by evidence, units ascending.
    """

    def __init__(self, evidence: SpanArrays, units: SpanArrays):
        ev_doc, ev_start, ev_end = evidence.document, evidence.start, evidence.end
        unit_doc, unit_start, unit_end = units.document, units.start, units.end
        self.ev_start, self.ev_end = ev_start, ev_end
        empty = np.zeros(0, dtype=np.int64)
        self.order, self.start, self.end = empty, empty, empty
        self.evidence, self.position, self.overlap = empty, empty, empty
        if ev_doc.size == 0 or unit_doc.size == 0:
            return
        subset = _units_of_documents(unit_doc, ev_doc)
        if subset is not None:
            unit_doc, unit_start, unit_end = unit_doc[subset], unit_start[subset], unit_end[subset]
            if unit_doc.size == 0:
                return
        order = _by_document_and_start(unit_doc, unit_start)
        doc, start, end = unit_doc[order], unit_start[order], unit_end[order]
        self.order, self.start, self.end = order, start, end
        if subset is not None:
            self.order = subset[order]
        # (document, offset) pairs become one sortable int64 key: doc·span + offset.
        low_doc = int(doc[0])
        low = min(int(start.min()), int(ev_start.min()), 0)
        high = max(int(end.max()), int(ev_end.max()), int(start.max()), int(ev_start.max()))
        span = high - low + 2
        base = (doc - low_doc) * span - low
        ev_base = (ev_doc - low_doc) * span - low
        # Units overlap each other, so ``end`` is not sorted: use its running max within
        # each document. Units before the first whose running max passes the evidence
        # start all end at or before it; units from the first starting at or after the
        # evidence end on start at or after it. The candidates lie in between.
        running_end = np.maximum.accumulate(base + end)  # base grows by ≥ span per document
        lo = np.searchsorted(running_end, ev_base + ev_start, side="right")
        hi = np.searchsorted(base + start, ev_base + ev_end, side="left")
        usable = (ev_doc >= low_doc) & (ev_end > ev_start)
        counts = np.where(usable, np.maximum(hi - lo, 0), 0)
        total = int(counts.sum())
        if total == 0:
            return
        # Expand each [lo, hi) range: evidence i repeated counts[i] times, positions
        # lo[i], lo[i]+1, … via a cumsum of ones restarted at each range.
        evidence = np.repeat(np.arange(ev_doc.size), counts)
        step = np.ones(total, dtype=np.int64)
        nonempty = np.flatnonzero(counts)
        firsts = np.cumsum(counts[nonempty]) - counts[nonempty]
        step[firsts] = lo[nonempty] - np.r_[0, hi[nonempty][:-1] - 1]
        position = np.cumsum(step)
        overlap = np.minimum(ev_end[evidence], end[position]) - np.maximum(
            ev_start[evidence], start[position]
        )
        keep = (overlap > 0) & (doc[position] == ev_doc[evidence])
        self.evidence, self.position, self.overlap = (
            evidence[keep],
            position[keep],
            overlap[keep],
        )

    def qualifying(self, policy: MappingPolicy) -> np.ndarray:
        """Mask over the candidate pairs: those where the evidence grades the unit."""
        if policy.rule == "any_overlap":
            return np.ones(self.evidence.size, dtype=bool)
        start, end = self.start[self.position], self.end[self.position]
        if policy.rule == "contains":
            return (start <= self.ev_start[self.evidence]) & (end >= self.ev_end[self.evidence])
        num, den = _threshold(policy.theta)
        if policy.rule == "evidence_overlap":
            length = self.ev_end[self.evidence] - self.ev_start[self.evidence]
        else:
            length = end - start
        return self.overlap * den >= num * length


def _identical_empty(evidence: SpanArrays, units: SpanArrays) -> tuple[np.ndarray, np.ndarray]:
    """``(evidence_index, unit_index)`` of every empty evidence span and empty unit that are
    the same span (document and offset)."""
    empty = np.zeros(0, dtype=np.int64)
    ev = np.flatnonzero(evidence.end == evidence.start)
    un = np.flatnonzero(units.end == units.start)
    if ev.size == 0 or un.size == 0:
        return empty, empty
    keys = np.concatenate(
        [
            np.stack([evidence.document[ev], evidence.start[ev]], axis=1),
            np.stack([units.document[un], units.start[un]], axis=1),
        ]
    )
    _, code = np.unique(keys, axis=0, return_inverse=True)
    code = code.ravel()
    ev_code, un_code = code[: ev.size], code[ev.size :]
    order = np.argsort(un_code, kind="stable")
    sorted_code = un_code[order]
    lo = np.searchsorted(sorted_code, ev_code, side="left")
    counts = np.searchsorted(sorted_code, ev_code, side="right") - lo
    total = int(counts.sum())
    if total == 0:
        return empty, empty
    within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(ev, counts), un[order[np.repeat(lo, counts) + within]]


def candidate_pairs(evidence: SpanArrays, units: SpanArrays):
    """Every (evidence, unit) pair of the same document with at least one shared character.

    Returns ``(evidence_index, unit_index, overlap)``: the overlap in characters.
    """
    found = _Candidates(evidence, units)
    return found.evidence, found.order[found.position], found.overlap


def map_pairs(evidence: SpanArrays, units: SpanArrays, *, policy: MappingPolicy):
    """``(evidence_index, unit_index)`` of every pair where the evidence grades the unit.

    Evidence of many queries (or annotators) can go in at once: the pairs say which
    evidence row graded which unit, and the caller groups them by its own query column.
    """
    found = _Candidates(evidence, units)
    keep = found.qualifying(policy)
    pair_evidence, position = found.evidence, found.position
    if not keep.all():  # any_overlap keeps every candidate: no copies
        pair_evidence, position = pair_evidence[keep], position[keep]
    pair_unit = found.order[position]
    empty_evidence, empty_unit = _identical_empty(evidence, units)
    if empty_evidence.size:
        pair_evidence = np.concatenate([pair_evidence, empty_evidence])
        pair_unit = np.concatenate([pair_unit, empty_unit])
    return pair_evidence, pair_unit


def best_evidence(grade, *groups) -> np.ndarray:
    """The one rule "a unit's grade is its best qualifying evidence", over the pairs
    ``map_pairs`` found: the position of the pair with the highest ``grade`` in each group
    of pairs (grouped by the ``groups`` columns, one value per pair: a unit, or a query,
    unit and annotator); among equal grades, the earliest pair. Positions come sorted by
    the groups, the first column outermost. A unit reached only by grade-0 evidence keeps
    grade 0 (judged non-relevant); a unit reached by nothing has no pair (unjudged)."""
    grade = np.asarray(grade, dtype=np.int64).ravel()
    n = grade.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    columns = [np.asarray(column, dtype=np.int64).ravel() for column in groups]
    key, size = _group_key(columns, n)
    if key is None:  # too many combinations for one int64 key: sort by the columns
        # lexsort is stable: equal grades keep the pairs' order. The last key sorts first.
        order = np.lexsort((-grade, *reversed(columns)))
        first = np.zeros(n, dtype=bool)
        first[0] = True
        for column in columns:
            ordered = column[order]
            first[1:] |= ordered[1:] != ordered[:-1]
        return order[first]
    if size <= 4 * n + 1024:
        # Few possible groups: no sort, one pass. Each pair's rank is its grade, then the
        # earlier the better (grade · n + n − 1 − position); a group's highest rank names
        # its pair. Groups come out in key order.
        rank = grade - grade.min()  # in place from here: these arrays are as long as the pairs
        rank *= n
        rank += n - 1
        rank -= np.arange(n, dtype=np.int64)
        top = np.full(size, -1, dtype=np.int64)
        np.maximum.at(top, key, rank)
        return n - 1 - top[top >= 0] % n
    order = np.lexsort((-grade, key))  # stable: equal grades keep the pairs' order
    ordered = key[order]
    return order[np.r_[True, ordered[1:] != ordered[:-1]]]


def _group_key(columns: list[np.ndarray], n: int) -> tuple[np.ndarray | None, int]:
    """The group columns as one int64 key ordered as the columns are (the first
    outermost), and how many keys there can be; (None, 0) when they would not fit."""
    key = None
    size = 1
    for column in columns:
        low = int(column.min())
        span = int(column.max()) - low + 1
        if size * span >= 2**62:
            return None, 0
        if key is None:
            key = column - low if low else column
        else:
            key = key * span
            key += column
            key -= low
        size *= span
    return (np.zeros(n, dtype=np.int64) if key is None else key), size


def map_evidence(
    evidence: SpanArrays, units: SpanArrays, *, grade, policy: MappingPolicy
) -> np.ndarray:
    """Grade of every unit (int64, in the caller's unit order).

    grade(u) = max{grade(e) : e qualifies for u under the policy} (``best_evidence``), and
    -1 (unjudged) when no evidence qualifies; a unit reached only by grade-0 evidence is 0
    (judged non-relevant). ``grade`` holds one grade per evidence span.
    """
    (grade,) = _as_int(grade)
    found = _Candidates(evidence, units)
    keep = found.qualifying(policy)
    pair_evidence, position = found.evidence, found.position
    if not keep.all():  # any_overlap keeps every candidate: no copies
        pair_evidence, position = pair_evidence[keep], position[keep]
    result = np.full(len(units), UNJUDGED, dtype=np.int64)
    # Grouped by sorted position, not by the caller's unit index: only the best pairs go
    # through ``order``. Empty units are reached by empty evidence alone (every other pair
    # needs a shared character), so their best pairs are found apart.
    best = best_evidence(grade[pair_evidence], position)
    result[found.order[position[best]]] = grade[pair_evidence[best]]
    empty_evidence, empty_unit = _identical_empty(evidence, units)
    if empty_evidence.size:
        best = best_evidence(grade[empty_evidence], empty_unit)
        result[empty_unit[best]] = grade[empty_evidence[best]]
    return result


def _covered_length(group, start, end, query_group, query_start, query_end, span):
    """Length of ``[query_start, query_end)`` covered by the union of the intervals
    ``[start, end)`` of the same group. Offsets must lie in ``[0, span)``; every query
    group must be the group of some interval.

    The intervals are merged into disjoint blocks per group (sorted by start, a new block
    wherever a start passes the running max of end); with L(g, x) = covered length of
    group g before offset x — prefix sums of block lengths plus the part of the block
    holding x — the answer is L(g, query_end) − L(g, query_start).
    """
    # Renumber the groups 0..k−1 (every query group must occur among the intervals) so
    # that group · span stays far from overflowing.
    codes, group = np.unique(group, return_inverse=True)
    group = group.ravel()
    query_group = np.searchsorted(codes, query_group)
    order = np.lexsort((start, group))
    group, start, end = group[order], start[order], end[order]
    key_start = group * span + start
    running = np.maximum.accumulate(group * span + end)  # groups never mix: offsets < span
    new_block = np.r_[True, key_start[1:] > running[:-1]]
    block = np.cumsum(new_block) - 1
    block_group, block_start = group[new_block], key_start[new_block]
    block_end = np.zeros(block_start.size, dtype=np.int64)
    np.maximum.at(block_end, block, group * span + end)
    before = np.r_[0, np.cumsum(block_end - block_start)]

    def covered_before(g, x):
        x = g * span + x
        i = np.searchsorted(block_start, x, side="right") - 1
        first = np.searchsorted(block_group, g, side="left")
        valid = (i >= first) & (i >= 0)
        i = np.maximum(i, 0)
        partial = np.clip(np.minimum(x, block_end[i]) - block_start[i], 0, None)
        return np.where(valid, before[i] - before[first] + partial, 0)

    return covered_before(query_group, query_end) - covered_before(query_group, query_start)


@dataclass(frozen=True)
class FragmentationCounts:
    """The counts ``fragmentation``'s figures are made of, per query (``query`` sorted
    ascending, every array over it). A query's counts depend on its own evidence alone:
    the counts of some queries, computed apart, replace theirs (``splice``) and the sums
    give exactly the figures a computation over everything gives."""

    query: np.ndarray
    n_evidence: np.ndarray  # evidence spans with at least one character
    n_split: np.ndarray  # of those, split across units (no one unit contains them)
    n_touched: np.ndarray  # Σ |U(e)| over them
    n_gold_units: np.ndarray  # distinct (query, unit) pairs the policy grades ≥ 1
    n_partly: np.ndarray  # of those, units carrying text none of the query's evidence marks

    NAMES = ("n_evidence", "n_split", "n_touched", "n_gold_units", "n_partly")

    @property
    def named(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.NAMES}

    @property
    def nbytes(self) -> int:
        return self.query.nbytes + sum(a.nbytes for a in self.named.values())

    def splice(self, part: FragmentationCounts, changed) -> FragmentationCounts:
        """These counts with the ``changed`` queries' replaced by ``part``'s (whose queries
        are all among ``changed``; a changed query without evidence now has none)."""
        stays = ~np.isin(self.query, np.asarray(changed, dtype=np.int64))
        query = np.concatenate([self.query[stays], part.query])
        order = np.argsort(query, kind="stable")
        columns = (
            np.concatenate([getattr(self, n)[stays], getattr(part, n)])[order] for n in self.NAMES
        )
        return FragmentationCounts(query[order], *columns)


def fragmentation(
    evidence: SpanArrays, units: SpanArrays, *, grade, policy: MappingPolicy, query=None
) -> dict:
    """How well a chunking (or any units) fits the evidence.

    Over the N evidence spans with at least one character (E), with U(e) the units sharing
    at least one character with e:

    - ``split_share`` = |{e ∈ E : no single unit contains e and |U(e)| ≥ 2}| / N —
      evidence split across chunks (None when N = 0);
    - ``chunks_per_evidence`` = Σ_{e ∈ E} |U(e)| / N (evidence overlapping no unit counts
      as 0);
    - ``gold_units_partly_irrelevant_share`` = |{(q, u) ∈ G : cover_q(u) < len(u)}| / |G|,
      where G holds the (query, unit) pairs the policy grades ≥ 1 (some qualifying
      evidence of q has grade ≥ 1) and cover_q(u) is the number of characters of u inside
      the union of all of q's grade ≥ 1 evidence: a gold chunk that also carries text
      nobody marked relevant (None when G is empty). ``n_gold_units`` = |G|.

    ``grade`` holds each evidence span's grade and matters only for the last share;
    ``query`` groups evidence by query (default: all one query).
    """
    counts = fragmentation_counts(evidence, units, grade=grade, policy=policy, query=query)
    return fragmentation_figures(counts, policy)


def fragmentation_figures(counts: FragmentationCounts, policy: MappingPolicy) -> dict:
    """``fragmentation``'s figures from the per-query counts (their sums)."""
    n, split, touched, pairs, partly = (int(getattr(counts, name).sum()) for name in counts.NAMES)
    return {
        "n_evidence": n,
        "split_share": split / n if n else None,
        "chunks_per_evidence": touched / n if n else None,
        "n_gold_units": pairs,
        "gold_units_partly_irrelevant_share": partly / pairs if pairs else None,
        "policy": str(policy),
    }


def fragmentation_counts(
    evidence: SpanArrays, units: SpanArrays, *, grade, policy: MappingPolicy, query=None
) -> FragmentationCounts:
    """Per query, the counts behind ``fragmentation``'s figures (see there)."""
    ev_doc, ev_start, ev_end = evidence.document, evidence.start, evidence.end
    unit_doc = units.document
    (ev_grade,) = _as_int(grade)
    ev_query = np.zeros(ev_doc.size, dtype=np.int64) if query is None else _as_int(query)[0]
    found = _Candidates(evidence, units)
    valid = ev_end > ev_start
    touched = np.bincount(found.evidence, minlength=ev_doc.size)
    inside = (found.start[found.position] <= ev_start[found.evidence]) & (
        found.end[found.position] >= ev_end[found.evidence]
    )
    contained = np.zeros(ev_doc.size, dtype=bool)
    contained[found.evidence[inside]] = True
    split = valid & ~contained & (touched >= 2)
    queries, query_code = np.unique(ev_query, return_inverse=True)
    query_code = query_code.ravel()
    n_queries = queries.size

    def per_query(codes: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        counted = np.bincount(codes, weights=weights, minlength=n_queries)
        return counted.astype(np.int64)  # weights are integers: their float sums are exact

    # Distinct gold (query, unit) pairs, as one int64 key: query code · n_units + position.
    gold = found.qualifying(policy) & (ev_grade[found.evidence] >= 1)
    n_units = max(found.start.size, 1)
    pairs = np.unique(query_code[found.evidence[gold]] * n_units + found.position[gold])
    pair_query = pairs // n_units
    partly_query = np.zeros(0, dtype=np.int64)
    if pairs.size:
        position = pairs % n_units
        relevant = valid & (ev_grade >= 1)
        n_docs = int(max(unit_doc.max(), ev_doc.max()) - min(unit_doc.min(), ev_doc.min())) + 1
        low_doc = int(min(unit_doc.min(), ev_doc.min()))
        low = int(min(found.start.min(), ev_start.min(), 0))
        span = int(max(found.end.max(), ev_end.max())) - low + 2
        unit_docs = unit_doc[found.order[position]]
        covered = _covered_length(
            query_code[relevant] * n_docs + (ev_doc[relevant] - low_doc),
            ev_start[relevant] - low,
            ev_end[relevant] - low,
            pair_query * n_docs + (unit_docs - low_doc),
            found.start[position] - low,
            found.end[position] - low,
            span,
        )
        partly_query = pair_query[covered < found.end[position] - found.start[position]]
    return FragmentationCounts(
        queries.astype(np.int64),
        per_query(query_code[valid]),
        per_query(query_code[split]),
        per_query(query_code[valid], touched[valid]),
        per_query(pair_query),
        per_query(partly_query),
    )
