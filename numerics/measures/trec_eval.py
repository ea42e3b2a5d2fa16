"""trec_eval's names, parameters, defaults, averaging and output over the measure registry.

``trec_columns(["map", "P.5,10"])`` turns trec_eval's ``-m`` arguments into ``Column``s,
one per printed line, in trec_eval's order (``measures.c``), each backed by a registry
measure (``map`` → AP, ``P_5`` → P@5, ``iprec_at_recall_0.10`` → IPrec@0.1 …) or, for
``Rprec_mult`` and ``11pt_avg``, computed here from the same judged rows.
``summarise`` averages as trec_eval does (``meas_avg.c``): a mean of the per-query values
in query order, the geometric mean for ``gm_map``, sums for the counts; ``report_lines``
prints them in its layout (``%-22s\\t%s\\t%6.4f``, counts as integers).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from .names import FAMILIES, Measure, parse_measure
from .ranking import JudgedRows, cumsum_within

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
MIN_GEO_MEAN = 0.00001  # trec_eval.h
COUNT_FAMILIES = ("NumQ", "NumRel", "NumRet", "NumRelRet", "NumNonRelJudgedRet")


@dataclass(frozen=True)
class Column:
    """One printed measure. ``summary``: ``mean``, ``sum`` (counts), ``gmean`` (gm_map) or
    ``runid``; ``special``: ``Rprec_mult`` or ``11pt_avg`` (computed here, ``levels``)."""

    name: str
    measure: Measure | None
    summary: str = "mean"
    per_query: bool = True
    integer: bool = False
    special: str = ""
    levels: tuple[float, ...] = ()


# trec_eval's measures that Assay computes, in the order trec_eval prints them, with the
# kind of parameters each takes and their defaults.
MEASURES: dict[str, tuple[str, tuple]] = {
    "runid": ("none", ()),
    "num_q": ("none", ()),
    "num_ret": ("none", ()),
    "num_rel": ("none", ()),
    "num_rel_ret": ("none", ()),
    "map": ("none", ()),
    "gm_map": ("none", ()),
    "Rprec": ("none", ()),
    "bpref": ("none", ()),
    "recip_rank": ("none", ()),
    "iprec_at_recall": ("levels", LEVELS),
    "P": ("cutoffs", CUTOFFS),
    "recall": ("cutoffs", CUTOFFS),
    "infAP": ("none", ()),
    "Rprec_mult": ("levels", MULTIPLES),
    "11pt_avg": ("numbers", LEVELS),
    "ndcg": ("none", ()),
    "ndcg_cut": ("cutoffs", CUTOFFS),
    "map_cut": ("cutoffs", CUTOFFS),
    "success": ("cutoffs", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("numbers", (1.0,)),
    "num_nonrel_judged_ret": ("none", ()),
}
OFFICIAL = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
).split()
# trec_eval's all_trec, less what Assay does not compute (relstring, unj, rbp, rbp_resid,
# gm_bpref, utility, relative_P, ndcg_rel, Rndcg, binG, G, set_relative_P).
NICKNAMES = {"official": tuple(OFFICIAL), "all_trec": tuple(MEASURES)}
# A registry family per plain trec_eval measure: (family, summary, printed per query).
_PLAIN = {
    "num_q": ("NumQ", "sum", False),
    "num_ret": ("NumRet", "sum", True),
    "num_rel": ("NumRel", "sum", True),
    "num_rel_ret": ("NumRelRet", "sum", True),
    "map": ("AP", "mean", True),
    "gm_map": ("AP", "gmean", False),
    "Rprec": ("Rprec", "mean", True),
    "bpref": ("Bpref", "mean", True),
    "recip_rank": ("RR", "mean", True),
    "infAP": ("infAP", "mean", True),
    "ndcg": ("nDCG", "mean", True),
    "set_P": ("SetP", "mean", True),
    "set_recall": ("SetR", "mean", True),
    "set_map": ("SetAP", "mean", True),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", "sum", True),
}
_AT_K = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success"}
_PRINTED = re.compile(
    r"^(?P<name>P|recall|ndcg_cut|map_cut|success|iprec_at_recall|Rprec_mult)_(?P<p>\d*\.?\d+)$"
)


def supported() -> str:
    return ", ".join(list(MEASURES) + list(NICKNAMES))


def _parameters(name: str, raw: str | None) -> tuple:
    kind, default = MEASURES[name]
    if raw is None:
        return default
    if kind == "none":
        raise ValueError(f"trec_eval measure {name!r} takes no parameters")
    try:
        values = [_whole(p) if kind == "cutoffs" else float(p) for p in raw.split(",")]
    except ValueError:
        raise ValueError(f"cannot read the parameters {raw!r} of {name!r}") from None
    if kind == "numbers":
        return tuple(values)
    values.sort()
    if kind == "cutoffs" and values[0] <= 0:
        raise ValueError(f"the cutoffs of {name!r} must be positive")
    if len(set(values)) < len(values):
        raise ValueError(f"duplicate cutoffs in {name}.{raw}")
    return tuple(values)


def _whole(text: str) -> int:
    """A cutoff as C's ``atol`` reads it: the leading whole number (``23.4`` → 23)."""
    match = re.match(r"\s*[+-]?\d+", text)
    if not match:
        raise ValueError(text)
    return int(match.group())


def _columns(name: str, raw: str | None) -> list[Column]:
    """The printed lines of trec_eval measure ``name`` with parameters ``raw`` (or None)."""
    params = _parameters(name, raw)
    if name == "runid":
        return [Column("runid", None, "runid", per_query=False)]
    if name in _PLAIN:
        family, summary, per_query = _PLAIN[name]
        integer = family in COUNT_FAMILIES
        return [Column(name, Measure(name, family), summary, per_query, integer)]
    if name in _AT_K:
        return [Column(f"{name}_{k}", Measure(f"{name}_{k}", _AT_K[name], k)) for k in params]
    if name == "iprec_at_recall":
        return [Column(f"{name}_{x:3.2f}", Measure(f"{name}_{x:3.2f}", "IPrec", x)) for x in params]
    if name == "Rprec_mult":
        return [Column(f"{name}_{x:3.2f}", None, special=name, levels=(x,)) for x in params]
    printed = name if raw is None else f"{name}_{raw}"
    if name == "set_F":
        return [Column(printed, Measure(printed, "SetF", beta=params[0]))]
    return [Column(printed, None, special=name, levels=params)]  # 11pt_avg


def trec_columns(specs: list[str]) -> list[Column]:
    """trec_eval's ``-m`` arguments (``map``, ``P.5,10``, ``official``, ``all_trec``…) as
    columns in trec_eval's printing order; no argument means ``official``. As in
    trec_eval, the first parameters given for a measure win. An unknown or unsupported
    name raises ``ValueError`` listing the supported ones."""
    marked: set[str] = set()
    given: dict[str, str] = {}
    for spec in specs or ["official"]:
        name, dot, raw = spec.partition(".")
        if dot:
            if not raw:
                raise ValueError(f"no parameters after {name + '.'!r}")
            given.setdefault(name, raw)
        for member in NICKNAMES.get(name, (name,)):
            if member not in MEASURES:
                raise ValueError(
                    f"unsupported trec_eval measure {name!r}; supported: {supported()}"
                )
            marked.add(member)
    return [c for name in MEASURES if name in marked for c in _columns(name, given.get(name))]


def columns_for(name: str) -> list[Column]:
    """A measure as ``evaluate`` accepts it: an ir_measures name (``nDCG@10``), a trec_eval
    name with its parameters (``ndcg_cut.10``, ``map``, ``P.5,10``) or a name as
    trec_eval prints it (``P_5``, ``iprec_at_recall_0.10``). The column keeps the name
    as given; counts are summed on the ``all`` line."""
    try:
        measure = parse_measure(name)
    except ValueError as error:
        printed = _PRINTED.match(name)
        base = printed["name"] if printed else name.partition(".")[0]
        if base not in MEASURES and base not in NICKNAMES:
            raise ValueError(f"{error}; or a trec_eval name: {supported()}") from None
        if printed:
            return [_single(c, name) for c in _columns(base, printed["p"])]
        return trec_columns([name])
    integer = measure.family in COUNT_FAMILIES
    return [Column(name, measure, "sum" if integer else "mean", integer=integer)]


def expand_measures(name: str) -> list[str]:
    """The measure names one name stands for, each of one per-query column: itself, or
    for a trec_eval name with several parameters the printed names (``P.5,10`` → ``P_5``,
    ``P_10``). A summary-only measure (``gm_map``, ``num_q``, ``runid``) raises
    ``ValueError``: there is no per-query value to show or test."""
    columns = columns_for(name)
    summary = [c.name for c in columns if not c.per_query or c.summary in ("runid", "gmean")]
    if summary:
        raise ValueError(
            f"{', '.join(summary)}: summary only, with no per-query value (trec_eval and "
            "evaluate print it)"
        )
    return [name] if len(columns) == 1 else [c.name for c in columns]


def measure_column(name: str | Measure) -> Column:
    """The one per-query column a measure name stands for, in either vocabulary
    (``nDCG@10``, ``ndcg_cut.10``, ``ndcg_cut_10``, ``map``, ``Rprec_mult_0.20`` …),
    keyed by the name as given; ``ValueError`` for a name of several columns or a
    summary-only one (``expand_measures``)."""
    if isinstance(name, Measure):
        return Column(name.name, name)
    if expand_measures(name) != [name]:
        raise ValueError(f"{name!r} names several measures; name them one at a time")
    column = columns_for(name)[0]
    if column.name == name:
        return column
    measure = column.measure and replace(column.measure, name=name)
    return replace(column, name=name, measure=measure)


def _single(column: Column, name: str) -> Column:
    """A printed trec_eval name (``P_5``) keeps exactly the spelling the user gave."""
    measure = column.measure
    if measure is not None:
        measure = Measure(name, measure.family, measure.cutoff, beta=measure.beta)
    return Column(
        name,
        measure,
        column.summary,
        column.per_query,
        column.integer,
        column.special,
        column.levels,
    )


def restricted(
    rows: JudgedRows, *, max_per_topic: int | None = None, judged_only: bool = False
) -> JudgedRows:
    """The judged rows as trec_eval sees them with ``-M`` (each query's first
    ``max_per_topic`` results only) and ``-J`` (results outside the judged set, and pooled
    but unjudged ones, left out before ranking: the rest are ranked 1, 2 … among
    themselves), as ``form_res_rels.c`` does."""
    query, rank, grade, n_ret = rows.query, rows.rank, rows.grade, rows.n_ret
    if max_per_topic is not None:
        keep = rank <= max_per_topic
        query, rank, grade = query[keep], rank[keep], grade[keep]
        n_ret = np.minimum(n_ret, max(max_per_topic, 0))
    if judged_only:
        keep = grade >= 0
        query, grade = query[keep], grade[keep]
        rank = cumsum_within(np.ones(query.size, dtype=np.int64), query)
        n_ret = np.bincount(query, minlength=rows.n_queries)
    return JudgedRows(
        n_queries=rows.n_queries,
        query=query,
        rank=rank,
        grade=grade,
        n_ret=n_ret,
        qrel_query=rows.qrel_query,
        qrel_grade=rows.qrel_grade,
    )


def values(rows: JudgedRows, columns: list[Column], rel: int) -> dict[str, np.ndarray]:
    """Per-query values of every column with values (not ``runid``), keyed by name."""
    out: dict[str, np.ndarray] = {}
    for column in columns:
        m = column.measure
        if m is not None:
            out[column.name] = FAMILIES[m.family].compute(rows, m, rel if m.rel is None else m.rel)
        elif column.special == "Rprec_mult":
            out[column.name] = _rprec_mult(rows, column.levels[0], rel)
        elif column.special == "11pt_avg":
            out[column.name] = _eleven_point(rows, column.levels, rel)
    return out


def _rprec_mult(rows: JudgedRows, multiple: float, rel: int) -> np.ndarray:
    """Precision at k = ⌊multiple · R + 0.9⌋ results, 0 when k is 0 (``m_Rprec_mult.c``)."""
    k = np.trunc(multiple * rows.num_rel(rel) + 0.9)
    hits = rows.count((rows.rank <= k[rows.query]) & rows.relevant(rel))
    out = np.zeros(rows.n_queries)
    np.divide(hits, k, out=out, where=k > 0)
    return out


def _eleven_point(rows: JudgedRows, levels: tuple[float, ...], rel: int) -> np.ndarray:
    """Interpolated precision averaged over recall levels, summed from the highest level
    down as ``m_11pt_avg.c`` does."""
    total = np.zeros(rows.n_queries)
    for level in sorted(levels, reverse=True):
        total += FAMILIES["IPrec"].compute(rows, Measure("", "IPrec", level), rel)
    return total / len(levels)


def summarise(column: Column, per_query: np.ndarray | None, kept: np.ndarray):
    """The ``all`` value of a column over the kept queries (a boolean mask), summed in
    query order as trec_eval accumulates."""
    if column.summary == "runid" or per_query is None:
        return None
    chosen = per_query[kept]
    n = chosen.size
    if column.summary == "gmean":
        logs = np.array([math.log(max(v, MIN_GEO_MEAN)) for v in chosen.tolist()])
        return math.exp(_sequential_sum(logs) / n) if n else 0.0
    total = _sequential_sum(chosen)
    return total if column.summary == "sum" else (total / n if n else 0.0)


def _sequential_sum(values: np.ndarray) -> float:
    """Left-to-right sum (C's loop), not numpy's pairwise one: the last bits match."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def formatted(column: Column, value) -> str:
    if column.integer:
        return str(int(value))
    return f"{value:.4f}"


def line(name: str, qid: str, text: str) -> str:
    """trec_eval's layout: ``%-22s\\t%s\\t%s``."""
    return f"{name:<22}\t{qid}\t{text}"


def report_lines(
    columns: list[Column],
    per_query: dict[str, np.ndarray],
    qids: list[str],
    kept: np.ndarray,
    *,
    runid: str = "",
    queries: bool = False,
    summary: bool = True,
    overrides: dict | None = None,
):
    """trec_eval's output lines: with ``queries`` (``-q``) every kept query's values in
    query order, then (unless ``summary`` is off, ``-n``) the ``all`` lines, whose values
    ``overrides`` may set by name."""
    overrides = overrides or {}
    if queries:
        for index in np.flatnonzero(kept).tolist():
            for column in columns:
                if column.per_query:
                    value = per_query[column.name][index]
                    yield line(column.name, qids[index], formatted(column, value))
    if not summary:
        return
    for column in columns:
        if column.summary == "runid":
            yield line("runid", "all", runid)
        else:
            value = overrides.get(column.name)
            if value is None:
                value = summarise(column, per_query.get(column.name), kept)
            yield line(column.name, "all", formatted(column, value))
