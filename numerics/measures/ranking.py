"""trec_eval's ranking and the judged-rows join: a run reduced to its judged results.

A run is put in trec_eval's order (``rank_order``), joined with the gold set by a single
stable sort of the (query, item) keys (which also finds duplicate results), and reduced
to the *judged* rows only — (query, rank, grade) for every retrieved item in the gold
set. Every measure needs nothing else but the per-query number of retrieved items and
the gold set itself, so after the join the work is proportional to the number of
judgments, not to the size of the run. ``RunIndex`` keeps a run ranked and its keys
sorted, for joining one run with many judgment sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class DuplicateResult(ValueError):
    """The same item twice in one query's ranking.

    ``position`` is the 0-based input row of the first repeat (the earliest row whose
    (query, item) pair already occurred above it). trec_eval itself refuses such runs.
    """

    def __init__(self, query: int, item: int, position: int):
        self.query, self.item, self.position = query, item, position
        super().__init__(
            f"item {item} appears twice in the ranking of query {query} (row {position})"
        )


def rank_order(run_query, run_item, run_score) -> np.ndarray:
    """Row order of trec_eval's ranking: query ascending, score descending, item descending.

    trec_eval sorts each query's results with ``comp_sim_docno`` (``form_res_rels.c``):
    score descending, then docno descending by ``strcmp`` — here item code descending,
    the codes sorting like the ids. Runs usually arrive grouped by query with scores
    descending (as retrievers and TREC files write them); that is checked in one pass and
    then only tied scores are reordered. Otherwise three stable sorts do the work
    (item, score, query). Duplicates are not checked here (``evaluate_arrays`` does).
    """
    run_query = np.asarray(run_query, dtype=np.int64)
    run_item = np.asarray(run_item, dtype=np.int64)
    run_score = np.asarray(run_score, dtype=np.float64)
    return _rank_order(run_query, run_item, run_score, None)


def _rank_order(run_query, run_item, run_score, by_key) -> np.ndarray:
    n = run_query.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # Comparisons of neighbours, not differences: masks of n bytes rather than arrays of
    # 8 n (a 10,000,000-result import stays well under 1 GB).
    same_query = run_query[1:] == run_query[:-1]
    if not np.all(
        (run_query[1:] > run_query[:-1]) | (same_query & (run_score[1:] <= run_score[:-1]))
    ):
        # by_key: (query, item) ascending; reversed, item descending breaks score ties.
        if by_key is None:
            by_key = np.lexsort((run_item, run_query))
        order = by_key[::-1]
        order = order[np.argsort(-run_score[order], kind="stable")]
        query = run_query[order]
        top = int(query.max())
        small = np.uint8 if top < 2**8 else np.uint16 if top < 2**16 else np.uint32
        if top < 2**32:  # narrow keys: numpy's stable sort becomes a radix sort
            query = query.astype(small)
        return order[np.argsort(query, kind="stable")]
    order = np.arange(n)
    tied = same_query & (run_score[1:] == run_score[:-1])  # row i ties row i + 1
    if tied.any():
        in_tie = np.flatnonzero(np.r_[tied, False] | np.r_[False, tied])
        # A tied row starts a group unless it ties the row before it.
        group = np.cumsum(~np.r_[False, tied][in_tie])
        order[in_tie] = in_tie[np.lexsort((-run_item[in_tie], group))]
    return order


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is not positive."""
    out = np.zeros(np.shape(numerator), dtype=float)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def cumsum_within(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at every query (rows grouped by query)."""
    total = np.cumsum(values)
    if total.size == 0:
        return total
    start = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    offset = total[start] - values[start]
    return total - np.repeat(offset, np.diff(np.r_[start, values.size]))


@dataclass
class JudgedRows:
    """The retrieved items that are in the gold set, all queries at once, plus counts.

    Rows are sorted by query, then rank; ``rank`` is the 1-based rank in the full run.
    ``cache`` keeps what several measures of one evaluation share.
    """

    n_queries: int
    query: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    n_ret: np.ndarray  # retrieved per query
    qrel_query: np.ndarray
    qrel_grade: np.ndarray
    cache: dict = field(default_factory=dict)

    def top(self, cutoff: int | None) -> np.ndarray:
        """Mask of the rows ranked within ``cutoff`` (all rows when None)."""
        if cutoff is None:
            return np.ones(self.rank.size, dtype=bool)
        return self.rank <= cutoff

    def count(self, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of ``weights`` (or count) over the rows in ``mask``."""
        w = None if weights is None else weights[mask]
        return np.bincount(self.query[mask], weights=w, minlength=self.n_queries).astype(float)

    def relevant(self, rel: int) -> np.ndarray:
        key = ("relevant", rel)
        if key not in self.cache:
            self.cache[key] = self.grade >= rel
        return self.cache[key]

    def num_rel(self, rel: int) -> np.ndarray:
        """R per query: judged items with grade ≥ rel, retrieved or not (``m_num_rel.c``)."""
        key = ("num_rel", rel)
        if key not in self.cache:
            self.cache[key] = np.bincount(
                self.qrel_query[self.qrel_grade >= rel], minlength=self.n_queries
            ).astype(float)
        return self.cache[key]

    def cum_relevant(self, rel: int) -> np.ndarray:
        """Relevant items at or above each row's rank, within its query."""
        key = ("cum", rel)
        if key not in self.cache:
            self.cache[key] = cumsum_within(self.relevant(rel).astype(np.int64), self.query)
        return self.cache[key]


def _int64(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64).ravel()


def judged_rows(
    *,
    run_query,
    run_item,
    run_score,
    qrel_query,
    qrel_item,
    qrel_grade,
    n_queries: int,
    ranked: bool = False,
) -> JudgedRows:
    """Join a run with its judgments (queries 0..n_queries-1, items coded in id order).

    ``ranked=True`` promises the run rows are already in ``rank_order``. A (query, item)
    pair twice in the run raises ``DuplicateResult``.
    """
    run_query, run_item = _int64(run_query), _int64(run_item)
    run_score = np.asarray(run_score, dtype=np.float64).ravel()
    qrel_query, qrel_item, qrel_grade = _int64(qrel_query), _int64(qrel_item), _int64(qrel_grade)
    n = run_query.size
    if not (run_item.size == run_score.size == n):
        raise ValueError("run_query, run_item and run_score must have the same length")
    if not (qrel_item.size == qrel_grade.size == qrel_query.size):
        raise ValueError("qrel_query, qrel_item and qrel_grade must have the same length")
    for what, q in (("run", run_query), ("qrel", qrel_query)):
        if q.size and (q.min() < 0 or q.max() >= n_queries):
            raise ValueError(f"{what} query numbers must lie in 0..n_queries-1 ({n_queries})")
    for what, i in (("run", run_item), ("qrel", qrel_item)):
        if i.size and i.min() < 0:
            raise ValueError(f"{what} item codes must be non-negative")
    n_items = int(max(run_item.max(initial=-1), qrel_item.max(initial=-1))) + 1
    # One stable sort of the run's (query, item) keys finds duplicates and serves the
    # join: each judgment is looked up in the sorted run keys (few lookups, not n).
    key = run_query * n_items + run_item
    by_key = np.argsort(key, kind="stable")
    sorted_key = key[by_key]
    repeat = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if repeat.size:
        row = int(by_key[repeat + 1].min())
        raise DuplicateResult(int(run_query[row]), int(run_item[row]), row)
    qrel_key = qrel_query * n_items + qrel_item
    at = np.searchsorted(sorted_key, qrel_key)
    if n:
        found = (at < n) & (sorted_key[np.minimum(at, n - 1)] == qrel_key)
    else:
        found = np.zeros(qrel_key.size, dtype=bool)
    row = by_key[at[found]]
    if ranked:
        position = row
    else:
        order = _rank_order(run_query, run_item, run_score, by_key)
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = np.arange(n)
        position = inverse[row]
    n_ret = np.bincount(run_query, minlength=n_queries)
    first = np.cumsum(n_ret) - n_ret  # ranked rows are grouped by query, ascending
    by_rank = np.argsort(position, kind="stable")
    query = qrel_query[found][by_rank]
    return JudgedRows(
        n_queries=n_queries,
        query=query,
        rank=position[by_rank] - first[query] + 1,
        grade=qrel_grade[found][by_rank],
        n_ret=n_ret,
        qrel_query=qrel_query,
        qrel_grade=qrel_grade,
    )


@dataclass(frozen=True)
class RunIndex:
    """A run ranked and indexed once, for evaluation against many judgment sets.

    Query keys are any integers (database ids, say); rows are in ``rank_order``. The
    (query, item) keys are kept sorted, so a join looks up the judgments (few) in the
    run (long) and the run is never sorted again.
    """

    query: np.ndarray  # each query key of the run once, ascending
    start: np.ndarray  # its first row
    count: np.ndarray  # its number of rows
    sorted_key: np.ndarray  # query position · n_items + item, ascending
    row_of_key: np.ndarray  # the row (in rank order) holding each sorted key
    n_items: int

    @property
    def nbytes(self) -> int:
        arrays = (self.query, self.start, self.count, self.sorted_key, self.row_of_key)
        return sum(a.nbytes for a in arrays)


def index_run(run_query, run_item, run_score, *, n_items: int | None = None) -> RunIndex:
    """Rank and index a run (``run_query`` holds query keys, any integers). A (query,
    item) pair twice raises ``DuplicateResult``; items must lie in 0..n_items-1."""
    run_query, run_item = _int64(run_query), _int64(run_item)
    run_score = np.asarray(run_score, dtype=np.float64).ravel()
    n_items = int(run_item.max(initial=-1)) + 1 if n_items is None else n_items
    if run_item.size and (run_item.min() < 0 or run_item.max() >= n_items):
        raise ValueError(f"run item codes must lie in 0..n_items-1 ({n_items})")
    order = rank_order(run_query, run_item, run_score)
    run_query, run_item = run_query[order], run_item[order]
    query, start, count = np.unique(run_query, return_index=True, return_counts=True)
    key = np.repeat(np.arange(query.size), count) * n_items + run_item
    row_of_key = np.argsort(key, kind="stable")
    sorted_key = key[row_of_key]
    repeat = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    if repeat.size:  # report the earliest input row that repeats a pair above it
        members = np.isin(sorted_key, sorted_key[repeat])
        keys, input_rows = sorted_key[members], order[row_of_key[members]]
        by_input = np.lexsort((input_rows, keys))
        keys, input_rows = keys[by_input], input_rows[by_input]
        row = int(input_rows[1:][keys[1:] == keys[:-1]].min())
        ranked_row = int(np.flatnonzero(order == row)[0])
        raise DuplicateResult(int(run_query[ranked_row]), int(run_item[ranked_row]), row)
    return RunIndex(query, start, count, sorted_key, row_of_key, n_items)


def indexed_judged_rows(
    index: RunIndex, *, qrel_query, qrel_item, qrel_grade, query_keys
) -> JudgedRows:
    """``judged_rows`` for an indexed run, over ``query_keys`` (the gold set's query keys,
    sorted, unique; judgments' queries must be among them). Run queries outside
    ``query_keys`` are ignored."""
    query_keys = _int64(query_keys)
    qrel_query, qrel_item, qrel_grade = _int64(qrel_query), _int64(qrel_item), _int64(qrel_grade)
    n_queries = query_keys.size
    qrel_position = np.searchsorted(query_keys, qrel_query)
    if qrel_query.size and not np.array_equal(
        query_keys[np.minimum(qrel_position, max(n_queries - 1, 0))], qrel_query
    ):
        raise ValueError("every judgment's query must be among query_keys")
    n_ret = np.zeros(n_queries, dtype=np.int64)
    if index.query.size and n_queries:
        where = np.minimum(np.searchsorted(query_keys, index.query), n_queries - 1)
        known = query_keys[where] == index.query
        n_ret[where[known]] = index.count[known]
    rows = np.zeros(0, dtype=np.int64)
    in_run_query = np.zeros(0, dtype=np.int64)
    matched = np.zeros(0, dtype=bool)
    if index.query.size and qrel_query.size:
        run_query = np.minimum(np.searchsorted(index.query, qrel_query), index.query.size - 1)
        usable = (index.query[run_query] == qrel_query) & (qrel_item < index.n_items)
        key = run_query * index.n_items + qrel_item
        at = np.minimum(np.searchsorted(index.sorted_key, key), index.sorted_key.size - 1)
        matched = usable & (index.sorted_key[at] == key)
        rows = index.row_of_key[at[matched]]
        in_run_query = run_query[matched]
    by_rank = np.argsort(rows, kind="stable")
    return JudgedRows(
        n_queries=n_queries,
        query=qrel_position[matched][by_rank],
        rank=(rows - index.start[in_run_query] + 1)[by_rank],
        grade=qrel_grade[matched][by_rank],
        n_ret=n_ret,
        qrel_query=qrel_position,
        qrel_grade=qrel_grade,
    )


def judged_rows_of_run(
    *,
    query,
    score,
    judged_row,
    judged_qrel,
    qrel_query,
    qrel_grade,
    n_queries: int,
    tie_codes,
) -> JudgedRows:
    """``judged_rows`` for a run whose ids are not coded: ``query`` gives each run row's
    query (0..n_queries-1, or -1 for a query the gold set lacks), ``judged_row`` the run
    rows found in the gold set and ``judged_qrel`` the gold row each matches, and
    ``tie_codes(rows)`` codes in id byte order for some rows — asked only for rows whose
    score ties another in the same query, the only place trec_eval compares ids.

    A run grouped by query with scores descending (as retrievers write them) is used as
    it is, with work and memory proportional to the judged rows; any other is sorted by
    query and score first."""
    query = np.asarray(query)
    score = np.asarray(score, dtype=np.float64)
    judged_row = np.asarray(judged_row, dtype=np.int64)
    n = query.size
    qrel_query, qrel_grade = _int64(qrel_query), _int64(qrel_grade)
    change = query[1:] != query[:-1]
    heads = np.r_[0, np.flatnonzero(change) + 1] if n else np.zeros(0, dtype=np.int64)
    order = None
    if np.unique(query[heads]).size != heads.size or not np.all(change | (score[1:] <= score[:-1])):
        # Query, then score descending; ties keep file order until ids break them.
        order = np.lexsort((-score, query))
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        query, score = query[order], score[order]
        judged_row = position[judged_row]
        change = query[1:] != query[:-1]
        heads = np.r_[0, np.flatnonzero(change) + 1] if n else heads
    # Rows are now grouped by query, best first; ties are runs of equal (query, score).
    query_start = heads[np.searchsorted(heads, judged_row, side="right") - 1]
    rank = judged_row - query_start + 1
    tie = np.flatnonzero(~change & (score[1:] == score[:-1]))  # row i ties row i + 1
    if tie.size:
        tie_start = tie[np.r_[True, tie[1:] != tie[:-1] + 1]]  # first row of each tie run
        run = np.searchsorted(tie_start, judged_row, side="right") - 1
        last = np.r_[tie[np.r_[tie[1:] != tie[:-1] + 1, True]]] + 1  # last row of each run
        inside = (run >= 0) & (judged_row <= last[np.maximum(run, 0)])
        if inside.any():
            runs = np.unique(run[inside])
            sizes = last[runs] - tie_start[runs] + 1
            members = np.repeat(tie_start[runs], sizes) + (
                np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
            )
            member_run = np.repeat(runs, sizes)
            original = members if order is None else order[members]
            codes = np.asarray(tie_codes(original), dtype=np.int64)
            by_id = np.lexsort((-codes, member_run))
            # Within its run, a row's place is the number of members with a larger id.
            place = np.empty(members.size, dtype=np.int64)
            place[by_id] = np.arange(members.size) - np.searchsorted(
                member_run[by_id], member_run[by_id]
            )
            at = np.searchsorted(members, judged_row[inside])
            rank[inside] = tie_start[run[inside]] + place[at] - query_start[inside] + 1
    judged_qrel = np.asarray(judged_qrel, dtype=np.int64)
    judged_query = qrel_query[judged_qrel]
    by_rank = np.lexsort((rank, judged_query))
    known = query[heads] >= 0
    n_ret = np.zeros(n_queries, dtype=np.int64)
    np.add.at(n_ret, query[heads][known].astype(np.int64), np.diff(np.r_[heads, n])[known])
    return JudgedRows(
        n_queries=n_queries,
        query=judged_query[by_rank],
        rank=rank[by_rank],
        grade=qrel_grade[judged_qrel][by_rank],
        n_ret=n_ret,
        qrel_query=qrel_query,
        qrel_grade=qrel_grade,
    )
