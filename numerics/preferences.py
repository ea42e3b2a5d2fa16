"""trec_eval's preference measures (``-R prefs``, ``-R qrels_prefs``): how many of the
preferences people stated between documents a ranking keeps. Numpy only.

A query's preference judgments are lines ``(group, subgroup, level, docno)``
(``get_prefs.c``). Within a subgroup every document is preferred to every document of a
lower level; a judgment group (one person's information need) with one subgroup is a set
of *equivalence classes* (the documents of one level), with several subgroups a
*preference array* closed under transitivity (``form_prefs_counts.c``). A level above 0
is relevant, 0 non-relevant.

The judged documents of the query are numbered: those the run retrieves 0 … NJR − 1 in
rank order, the others NJR … NJ − 1 in docno order. A preference a > b is

- *retrieved* when both are retrieved (fulfilled when a ranks above b);
- *implied* when one is (fulfilled when that one is a);
- *not occurring* when neither is (never fulfilled).

Per group: fulfilled (ret, imp) and possible (ret, imp, not occurring) counts; over all
groups a count array C[i][j] = the groups preferring i to j. The measures
(``m_prefs_*.c``):

- ``prefs_num_prefs_poss`` / ``_ful`` / ``_ful_ret``: Σ possible; Σ fulfilled (ret + imp);
  Σ fulfilled ret (summed over queries, not averaged);
- ``prefs_simp``: Σ fulfilled / Σ possible; ``_ret`` retrieved only, ``_imp`` retrieved
  and implied;
- ``prefs_pair``: over each pair of documents some group orders, the mean of
  C[i][j] / (C[i][j] + C[j][i]) (i above j; pairs neither retrieved count 0); ``_ret``,
  ``_imp`` as above;
- ``prefs_avgjg``: the mean over groups of fulfilled / possible; ``_ret``, ``_imp``;
- ``prefs_avgjg_Rnonrel`` (``_ret``: retrieved documents only): as ``prefs_avgjg`` but
  as if a group had as many non-relevant documents as relevant ones, R: with R ≥ N
  (N non-relevant), (R − N) fulfilled preferences are added for each relevant retrieved
  document and (R − N) possible ones for each relevant document; with R < N only the
  first R non-relevant documents count (``m_prefs_avgjg_Rnonrel.c``, ``_ret.c``, their
  ``recalculate`` included as it is).

Ties in the run are ordered by docno ascending here (``form_prefs_counts.c``), not
descending as for the other measures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

COUNTS = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
MEASURES = (
    *COUNTS,
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)


@dataclass
class Group:
    """One judgment group's counts, and its preferences for the R-nonrel measures:
    ``classes`` (level, numbers ascending), best level first, or ``array`` (a[i][j]:
    i preferred to j) with each document's level (−1 when the group did not judge it)."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    not_occur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    classes: list = field(default_factory=list)
    array: np.ndarray | None = None
    levels: np.ndarray | None = None


@dataclass
class QueryPreferences:
    judged: int  # NJ
    judged_ret: int  # NJR
    groups: list[Group]
    counts: np.ndarray  # C, NJ × NJ


def query_preferences(
    lines: list[tuple[bytes, bytes, float, bytes]], retrieved: list[bytes]
) -> QueryPreferences:
    """A query's preference lines ``(group, subgroup, level, docno)`` against the judged
    documents the run retrieved (``retrieved``, in rank order)."""
    docs = sorted({doc for *_, doc in lines})
    in_prefs = set(docs)
    ranked = [d for d in retrieved if d in in_prefs]
    number = {doc: i for i, doc in enumerate(ranked)}
    for doc in docs:
        if doc not in number:
            number[doc] = len(number)
    nj, njr = len(number), len(ranked)
    rows = sorted(
        ((g, s, level, number[doc]) for g, s, level, doc in lines),
        key=lambda r: (r[0], r[1], -r[2], r[3]),
    )
    counts = np.zeros((nj, nj), dtype=np.int64)
    groups = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end][0] == rows[start][0]:
            end += 1
        mine = rows[start:end]
        if len({r[1] for r in mine}) > 1:
            groups.append(_array_group(mine, nj, njr, counts))
        else:
            groups.append(_class_group(mine, njr, counts))
        start = end
    return QueryPreferences(nj, njr, groups, counts)


def _class_group(rows, njr: int, counts: np.ndarray) -> Group:
    """One subgroup: equivalence classes of equal level, compared class by class."""
    group = Group()
    for row in rows:
        if not group.classes or group.classes[-1][0] != row[2]:
            group.classes.append((row[2], []))
        group.classes[-1][1].append(row[3])
    group.classes = [(level, np.array(ranks, dtype=np.int64)) for level, ranks in group.classes]
    for first, (level, ranks) in enumerate(group.classes):
        retrieved = int(np.count_nonzero(ranks < njr))
        if level > 0.0:
            group.num_rel_ret += retrieved
            group.num_rel += ranks.size
        else:
            group.num_nonrel_ret += retrieved
            group.num_nonrel += ranks.size
        for _, lower in group.classes[first + 1 :]:
            r1, r2 = np.broadcast_arrays(ranks[:, None], lower[None, :])
            np.add.at(counts, (r1.ravel(), r2.ravel()), 1)
            above = r1 < r2
            group.ful_ret += int(np.count_nonzero(above & (r2 < njr)))
            group.ful_imp += int(np.count_nonzero(above & (r2 >= njr) & (r1 < njr)))
            group.poss_ret += int(np.count_nonzero(~above & (r1 < njr)))
            group.poss_imp += int(np.count_nonzero(~above & (r1 >= njr) & (r2 < njr)))
            group.not_occur += int(np.count_nonzero((r1 >= njr) & (r2 >= njr)))
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    return group


def _array_group(rows, nj: int, njr: int, counts: np.ndarray) -> Group:
    """Several subgroups: every subgroup's preferences, closed under transitivity."""
    group = Group()
    array = np.zeros((nj, nj), dtype=bool)
    levels = np.full(nj, -1.0)
    for i, (_, sub, level, rank) in enumerate(rows):
        if (levels[rank] > 0.0 and level == 0.0) or (levels[rank] == 0.0 and level > 0.0):
            raise ValueError(
                f"a document has both level 0 and a level above 0 in group {_name(rows)!r}"
            )
        levels[rank] = level
        for _, other_sub, other_level, other_rank in rows[i + 1 :]:
            if other_sub != sub:
                break
            if other_level != level:
                array[rank, other_rank] = True
    reach = array | np.eye(nj, dtype=bool)
    while True:
        wider = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if np.array_equal(wider, reach):
            break
        reach = wider
    np.fill_diagonal(reach, False)
    if np.any(reach & reach.T):
        raise ValueError(f"inconsistent preferences in group {_name(rows)!r}")
    group.array, group.levels = reach, levels
    counts += reach
    ret = slice(0, njr)
    rest = slice(njr, nj)
    top = reach[ret, ret]
    group.ful_ret = int(np.count_nonzero(np.triu(top, 1)))
    group.poss_ret = int(np.count_nonzero(np.tril(top, -1))) + group.ful_ret
    group.ful_imp = int(np.count_nonzero(reach[ret, rest]))
    group.poss_imp = int(np.count_nonzero(reach[rest, ret])) + group.ful_imp
    group.not_occur = int(np.count_nonzero(reach[rest, rest]))
    group.num_rel_ret = int(np.count_nonzero(levels[:njr] > 0.0))
    group.num_nonrel_ret = int(np.count_nonzero(levels[:njr] == 0.0))
    group.num_rel = int(np.count_nonzero(levels > 0.0))
    group.num_nonrel = int(np.count_nonzero(levels == 0.0))
    return group


def _name(rows) -> str:
    return rows[0][0].decode(errors="replace")


def _ratio(ful: float, poss: float) -> float:
    """ful / poss as C divides doubles (0 / 0 is NaN)."""
    if poss == 0:
        return math.nan if ful == 0 else math.copysign(math.inf, ful)
    return ful / poss


def _pairs(counts: np.ndarray, njr: int, blocks: str) -> float:
    """The mean over ordered pairs of C[i][j] / (C[i][j] + C[j][i]); ``blocks``: "ret"
    both retrieved, "imp" and one retrieved, "all" and neither (counted, adding 0)."""
    nj = counts.shape[0]
    total, pairs = [], 0
    i, j = np.triu_indices(nj, 1)
    forward, backward = counts[i, j], counts[j, i]
    some = (forward > 0) | (backward > 0)
    both_ret = (i < njr) & (j < njr)
    one_ret = (i < njr) & (j >= njr)
    for mask, kind in ((both_ret, "ret"), (one_ret, "imp")):
        if kind == "imp" and blocks == "ret":
            break
        chosen = mask & some
        pairs += int(np.count_nonzero(chosen))
        total.append(forward[chosen] / (forward[chosen] + backward[chosen]))
    if blocks == "all":
        pairs += int(np.count_nonzero(some & (i >= njr)))
    summed = float(np.cumsum(np.concatenate(total))[-1]) if total and sum(map(len, total)) else 0.0
    return summed / pairs if pairs else 0.0


def _recalculated(group: Group, njr: int, retrieved_only: bool) -> tuple[int, int]:
    """Fulfilled and possible preferences when only the first R non-relevant documents
    count (``recalculate`` in ``m_prefs_avgjg_Rnonrel.c`` and ``_ret.c``)."""
    ful = poss = 0
    if group.array is None:
        classes = group.classes
        keep = group.num_rel_ret if retrieved_only else group.num_rel
        new_nonrel = classes[-1][1][:keep]

        def usable(ranks):
            return ranks[ranks < njr] if retrieved_only else ranks

        def tally(r1, r2):
            a, b = np.broadcast_arrays(usable(r1)[:, None], usable(r2)[None, :])
            won = (a < b) if retrieved_only else ((a < b) & (a < njr))
            return int(np.count_nonzero(won)), int(won.size - np.count_nonzero(won))

        for first in range(len(classes)):
            for second in range(first + 1, len(classes) - 1):
                f, p = tally(classes[first][1], classes[second][1])
                ful, poss = ful + f, poss + p
        for first in range(len(classes)):
            f, p = tally(classes[first][1], new_nonrel)
            ful, poss = ful + f, poss + p
        return ful, poss + ful
    levels, reach = group.levels, group.array
    nj = levels.size
    scan = njr if retrieved_only else nj
    seen, first_discarded = 0, scan
    for i in range(scan):
        if levels[i] == 0.0:
            seen += 1
            if seen == group.num_rel + 1:
                first_discarded = i
                break
    kept = ~((np.arange(nj) >= first_discarded) & (levels == 0.0))
    area = reach & kept[:, None] & kept[None, :]
    ret = slice(0, njr)
    top = area[ret, ret]
    ful = int(np.count_nonzero(np.triu(top, 1)))
    poss = int(np.count_nonzero(np.tril(top, -1)))
    if not retrieved_only:
        ful += int(np.count_nonzero(area[ret, njr:]))
        poss += int(np.count_nonzero(area[njr:, :]))
    return ful, poss + ful


def _rnonrel(prefs: QueryPreferences, retrieved_only: bool) -> float:
    total = 0.0
    for g in prefs.groups:
        if retrieved_only:
            big_r, big_n = g.num_rel_ret, g.num_nonrel_ret
        else:
            big_r, big_n = g.num_rel, g.num_nonrel
        if big_r >= big_n:
            if retrieved_only:
                ful, poss = g.ful_ret, g.poss_ret
            else:
                ful = g.ful_ret + g.ful_imp
                poss = g.poss_ret + g.poss_imp + g.not_occur
            ful += g.num_rel_ret * (big_r - big_n)
            poss += g.num_rel * (big_r - big_n)
        else:
            ful, poss = _recalculated(g, prefs.judged_ret, retrieved_only)
        total += _ratio(ful, poss)
    return total / len(prefs.groups) if total > 0.0 else 0.0


def _avgjg(prefs: QueryPreferences, kind: str) -> float:
    total = 0.0
    for g in prefs.groups:
        ful, poss = _fulfilled_possible([g], kind)
        if poss:
            total += ful / poss
    return total / len(prefs.groups) if total > 0.0 else 0.0


def _fulfilled_possible(groups: list[Group], kind: str) -> tuple[int, int]:
    ful = sum(g.ful_ret + (g.ful_imp if kind != "ret" else 0) for g in groups)
    poss = sum(
        g.poss_ret + (g.poss_imp if kind != "ret" else 0) + (g.not_occur if kind == "all" else 0)
        for g in groups
    )
    return ful, poss


def preference_values(prefs: QueryPreferences) -> dict[str, float]:
    """Every preference measure of one query (``MEASURES``)."""
    out: dict[str, float] = {}
    ful, poss = _fulfilled_possible(prefs.groups, "all")
    out["prefs_num_prefs_poss"] = float(poss)
    out["prefs_num_prefs_ful"] = float(ful)
    out["prefs_num_prefs_ful_ret"] = float(sum(g.ful_ret for g in prefs.groups))
    for suffix, kind in (("", "all"), ("_ret", "ret"), ("_imp", "imp")):
        ful, poss = _fulfilled_possible(prefs.groups, kind)
        out[f"prefs_simp{suffix}"] = ful / poss if poss else 0.0
        out[f"prefs_pair{suffix}"] = _pairs(prefs.counts, prefs.judged_ret, kind)
        out[f"prefs_avgjg{suffix}"] = _avgjg(prefs, kind)
    out["prefs_avgjg_Rnonrel"] = _rnonrel(prefs, retrieved_only=False)
    out["prefs_avgjg_Rnonrel_ret"] = _rnonrel(prefs, retrieved_only=True)
    return out
