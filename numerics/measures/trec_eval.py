"""trec_eval's names, parameters, defaults, averaging and output over the measure registry.

``measure_columns_of(["map", "P.5,10"])`` turns trec_eval's ``-m`` arguments into ``Column``s,
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

from numerics.preferences import MEASURES as PREFERENCE_MEASURES

from . import ranked_lists as lists
from .names import FAMILIES, Measure, parse_measure
from .ranked import recall_level_rank
from .ranking import JudgedRows, cumsum_within

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
MIN_GEO_MEAN = 0.00001  # trec_eval.h
COUNT_FAMILIES = ("NumQ", "NumRel", "NumRet", "NumRelRet", "NumNonRelJudgedRet")


@dataclass(frozen=True)
class Column:
    """One printed measure. ``summary``: ``mean``, ``sum`` (counts), ``gmean`` (gm_map,
    gm_bpref), ``runid`` or ``none`` (relstring: per query only); ``special`` names the
    measure computed here (``Rprec_mult``, ``11pt_avg``, ``utility``, ``G`` …) with its
    numbers in ``levels`` and its ``grade=gain`` / ``p=`` pairs in ``pairs``."""

    name: str
    measure: Measure | None
    summary: str = "mean"
    per_query: bool = True
    integer: bool = False
    special: str = ""
    levels: tuple[float, ...] = ()
    pairs: tuple[tuple[str, float], ...] = ()


# trec_eval's measures that Assay computes, in the order trec_eval prints them
# (measures.c), with the kind of parameters each takes and their defaults.
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
    "relstring": ("numbers", (10.0,)),
    "recall": ("cutoffs", CUTOFFS),
    "infAP": ("none", ()),
    "gm_bpref": ("none", ()),
    "Rprec_mult": ("levels", MULTIPLES),
    "utility": ("numbers", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": ("numbers", LEVELS),
    "binG": ("none", ()),
    "G": ("pairs", ()),
    "ndcg": ("pairs", ()),
    "ndcg_rel": ("pairs", ()),
    "Rndcg": ("pairs", ()),
    "ndcg_cut": ("cutoffs", CUTOFFS),
    "map_cut": ("cutoffs", CUTOFFS),
    "relative_P": ("cutoffs", CUTOFFS),
    "success": ("cutoffs", (1, 5, 10)),
    "set_P": ("none", ()),
    "set_relative_P": ("none", ()),
    "set_recall": ("none", ()),
    "set_map": ("none", ()),
    "set_F": ("numbers", (1.0,)),
    "num_nonrel_judged_ret": ("none", ()),
    **{name: ("none", ()) for name in PREFERENCE_MEASURES},
    "map_avgjg": ("none", ()),
    "P_avgjg": ("cutoffs", CUTOFFS),
    "Rprec_mult_avgjg": ("levels", MULTIPLES),
    "rbp": ("pairs", ()),
    "rbp_resid": ("pairs", ()),
    "unj": ("cutoffs", (5, 10, 20)),
}
OFFICIAL = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
).split()
SET = (
    "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F"
).split()
# Averaged over judgment groups: trec_eval computes them with ``-R qrels_jg`` only.
GROUP_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
PREFS = (
    "runid num_q prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp"
    " prefs_pair prefs_avgjg"
).split()
# trec_eval's nicknames (measures.c): all_trec is every measure above but the group ones.
NICKNAMES = {
    "official": tuple(OFFICIAL),
    "set": tuple(SET),
    "all_trec": tuple(
        m for m in MEASURES if m not in GROUP_MEASURES and m not in PREFERENCE_MEASURES
    ),
    "all_prefs": ("runid", "num_q", *PREFERENCE_MEASURES),
    "prefs": tuple(PREFS),
    "qrels_jg": ("runid", "num_q", *GROUP_MEASURES),
}
# Measures with a value per query that is not a number, or only for trec_eval's layout.
TEXT_ONLY = ("relstring",)
# Measures of preference judgments (-R prefs, -R qrels_prefs), numerics.preferences.
PREFERENCE_COUNTS = PREFERENCE_MEASURES[:3]
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
    "gm_bpref": ("Bpref", "gmean", False),
    "recip_rank": ("RR", "mean", True),
    "infAP": ("infAP", "mean", True),
    "set_P": ("SetP", "mean", True),
    "set_recall": ("SetR", "mean", True),
    "set_map": ("SetAP", "mean", True),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", "sum", True),
}
_AT_K = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success"}
_PRINTED = re.compile(
    r"^(?P<name>P|recall|ndcg_cut|map_cut|success|iprec_at_recall|Rprec_mult|relative_P|unj"
    r"|P_avgjg|Rprec_mult_avgjg)"
    r"_(?P<p>\d*\.?\d+)$"
)


def supported() -> str:
    return ", ".join(list(MEASURES) + list(NICKNAMES))


def _parameters(name: str, raw: str | None) -> tuple:
    kind, default = MEASURES[name]
    if raw is None:
        return default
    if kind == "none":
        raise ValueError(f"trec_eval measure {name!r} takes no parameters")
    if kind == "pairs":
        return _pairs(name, raw)
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


def _pairs(name: str, raw: str) -> tuple[tuple[str, float], ...]:
    """``name=value`` pairs, comma separated (``ndcg.1=3,2=9``, ``rbp.p=0.8``)."""
    pairs = []
    for part in raw.split(","):
        key, equals, value = part.partition("=")
        try:
            if not (key and equals):
                raise ValueError(part)
            pairs.append((key, float(value)))
        except ValueError:
            raise ValueError(
                f"cannot read the parameters {raw!r} of {name!r}; write level=gain pairs"
            ) from None
    return tuple(pairs)


def _whole(text: str) -> int:
    """A cutoff as C's ``atol`` reads it: the leading whole number (``23.4`` → 23)."""
    match = re.match(r"\s*[+-]?\d+", text)
    if not match:
        raise ValueError(text)
    return int(match.group())


def _columns(name: str, raw: str | None) -> list[Column]:
    """The printed lines of trec_eval measure ``name`` with parameters ``raw`` (or None)."""
    params = _parameters(name, raw)
    printed = name if raw is None else f"{name}_{raw}"
    if name == "runid":
        return [Column("runid", None, "runid", per_query=False)]
    if name in _PLAIN:
        family, summary, per_query = _PLAIN[name]
        integer = family in COUNT_FAMILIES
        return [Column(name, Measure(name, family), summary, per_query, integer)]
    if name in _AT_K:
        return [Column(f"{name}_{k}", Measure(f"{name}_{k}", _AT_K[name], k)) for k in params]
    if name in PREFERENCE_MEASURES:
        count = name in PREFERENCE_COUNTS
        return [Column(name, None, "sum" if count else "mean", integer=count, special="prefs")]
    if name == "map_avgjg":
        return [Column(name, Measure(name, "AP"))]
    if name == "P_avgjg":
        return [Column(f"{name}_{k}", Measure(f"{name}_{k}", "P", k)) for k in params]
    if name == "Rprec_mult_avgjg":
        return [Column(f"{name}_{x:3.2f}", None, special="Rprec_mult", levels=(x,)) for x in params]
    if name in ("relative_P", "unj"):
        return [Column(f"{name}_{k}", None, special=name, levels=(k,)) for k in params]
    if name == "iprec_at_recall":
        return [Column(f"{name}_{x:3.2f}", Measure(f"{name}_{x:3.2f}", "IPrec", x)) for x in params]
    if name == "Rprec_mult":
        return [Column(f"{name}_{x:3.2f}", None, special=name, levels=(x,)) for x in params]
    if name == "set_F":
        return [Column(printed, Measure(printed, "SetF", beta=params[0]))]
    if name == "ndcg" and raw is None:
        return [Column(name, Measure(name, "nDCG"))]
    if name == "relstring":
        return [Column(printed, None, "none", special=name, levels=params[:1])]
    if name == "utility" and len(params) != 4:
        raise ValueError("utility takes four weights, e.g. utility.1,-1,0,0")
    if MEASURES[name][0] == "pairs":
        return [Column(printed, None, special=name, pairs=params)]
    return [Column(printed, None, special=name, levels=params)]  # 11pt_avg, utility, …


def measure_columns_of(specs: list[str]) -> list[Column]:
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
        return measure_columns_of([name])
    integer = measure.family in COUNT_FAMILIES
    return [Column(name, measure, "sum" if integer else "mean", integer=integer)]


def expand_measures(name: str) -> list[str]:
    """The measure names one name stands for, each of one per-query column: itself, or
    for a trec_eval name with several parameters the printed names (``P.5,10`` → ``P_5``,
    ``P_10``). A summary-only measure (``gm_map``, ``num_q``, ``runid``) raises
    ``ValueError``: there is no per-query value to show or test."""
    columns = columns_for(name)
    prefs = [c.name for c in columns if c.special == "prefs"]
    if prefs:
        raise ValueError(
            f"{', '.join(prefs)}: a measure of preference judgments; only manage.py "
            "trec_eval -R prefs computes it"
        )
    text = [c.name for c in columns if c.special in TEXT_ONLY]
    if text:
        raise ValueError(
            f"{', '.join(text)}: text, not a number; only manage.py trec_eval prints it"
        )
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


def values(
    rows: JudgedRows,
    columns: list[Column],
    rel: int,
    *,
    collection: int = 0,
    answered: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Per-query values of every column with values (not ``runid``), keyed by name.
    ``collection`` is trec_eval's ``-N`` (``utility``); ``answered`` marks the queries the
    run answers (default: those with results): trec_eval's ``utility`` is 0 for the
    others. ``relstring``'s values are strings."""
    out: dict[str, np.ndarray] = {}
    for column in columns:
        m = column.measure
        if m is not None:
            out[column.name] = FAMILIES[m.family].compute(rows, m, rel if m.rel is None else m.rel)
        elif column.special:
            out[column.name] = _special(rows, column, rel, collection)
            if column.special == "utility":
                ran = rows.n_ret > 0 if answered is None else answered
                out[column.name] = np.where(ran, out[column.name], 0.0)
    if answered is not None:
        _answered_empty(rows, columns, out, answered, rel)
    return out


def _answered_empty(rows: JudgedRows, columns: list[Column], out: dict, answered, rel: int):
    """trec_eval's interpolated precision of a query the run answers with no result left
    (``-J`` without a judged result): precision 0 / 0 at the recall levels x with
    lround(x·R) = 0, NaN, printed ``-nan`` (``m_iprec_at_recall.c``); ``11pt_avg`` sums
    it. Only ``trec_eval``'s output asks for this (``answered`` given)."""
    empty = answered & (rows.n_ret == 0)
    if not empty.any():
        return
    for column in columns:
        m = column.measure
        if m is not None and m.family == "IPrec":
            levels, level_rel = (float(m.cutoff),), rel if m.rel is None else m.rel
        elif column.special == "11pt_avg":
            levels, level_rel = column.levels, rel
        else:
            continue
        num_rel = rows.num_rel(level_rel)
        zero = np.any([recall_level_rank(x, num_rel) == 0 for x in levels], axis=0)
        out[column.name] = np.where(empty & zero, np.nan, out[column.name])


def _special(rows: JudgedRows, column: Column, rel: int, collection: int):
    """The value of a column computed here rather than by a registry family."""
    special, levels, pairs = column.special, column.levels, column.pairs
    if special == "Rprec_mult":
        return _rprec_mult(rows, levels[0], rel)
    if special == "11pt_avg":
        return _eleven_point(rows, levels, rel)
    if special == "relative_P":
        return lists.relative_p(rows, int(levels[0]), rel)
    if special == "unj":
        return lists.unjudged(rows, int(levels[0]))
    if special == "utility":
        return lists.utility(rows, levels, rel, collection)
    if special == "relstring":
        return np.array(lists.relstring(rows, int(levels[0])), dtype=object)
    if special == "binG":
        return lists.bin_g(rows, rel)
    if special == "set_relative_P":
        return lists.set_relative_p(rows, rel)
    if special == "Rndcg":
        return lists.rndcg(rows, pairs, rel)
    by_pairs = {
        "G": lists.g_measure,
        "ndcg": lists.ndcg_gains,
        "ndcg_rel": lists.ndcg_rel,
        "rbp": lists.rbp,
        "rbp_resid": lists.rbp_resid,
    }
    return by_pairs[special](rows, pairs)


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


MISSING_ZSCORE = -1000000.0  # trec_eval.h's MISSING_ZSCORE_VALUE


def zscored(
    columns: list[Column],
    per_query: dict[str, np.ndarray],
    qids: list[str],
    table: dict[str, dict[str, tuple[float, float]]],
) -> dict[str, np.ndarray]:
    """trec_eval's ``-Z`` (``convert_zscores.c``): every per-query value v of a measure
    becomes (v − mean) / stddev with the query's mean and stddev for that measure from
    ``table`` (qid → printed name → (mean, stddev)); 0 when stddev is 0 and v is the
    mean; −1,000,000 when the query, the measure or a usable stddev is missing. A
    geometric-mean measure's value is its log (floored at 10⁻⁵) first; ``num_q`` and
    ``relstring`` are left as they are."""
    out = dict(per_query)
    for column in columns:
        if column.name not in per_query or column.special in TEXT_ONLY:
            continue
        if column.measure is not None and column.measure.family == "NumQ":
            continue
        raw = per_query[column.name].astype(float)
        if column.summary == "gmean":
            raw = np.log(np.maximum(raw, MIN_GEO_MEAN))
        z = np.full(raw.size, MISSING_ZSCORE)
        for index, qid in enumerate(qids):
            found = table.get(qid, {}).get(column.name)
            if found is None:
                continue
            mean, stddev = found
            if stddev:
                z[index] = (raw[index] - mean) / stddev
            elif raw[index] == mean:
                z[index] = 0.0
        out[column.name] = z
    return out


def summarise(column: Column, per_query: np.ndarray | None, kept: np.ndarray, *, logs=False):
    """The ``all`` value of a column over the kept queries (a boolean mask), summed in
    query order as trec_eval accumulates; ``logs``: a geometric mean's values are
    already logs (``-Z``)."""
    if column.summary in ("runid", "none") or per_query is None:
        return None
    chosen = per_query[kept]
    n = chosen.size
    if column.summary == "gmean":
        if logs:
            return math.exp(_sequential_sum(chosen) / n) if n else 0.0
        logs_ = np.array([math.log(max(v, MIN_GEO_MEAN)) for v in chosen.tolist()])
        return math.exp(_sequential_sum(logs_) / n) if n else 0.0
    total = _sequential_sum(chosen)
    return total if column.summary == "sum" else (total / n if n else 0.0)


def _sequential_sum(values: np.ndarray) -> float:
    """Left-to-right sum (C's loop), not numpy's pairwise one: the last bits match."""
    return float(np.cumsum(values)[-1]) if values.size else 0.0


def formatted(column: Column, value, *, zscore: bool = False) -> str:
    """A value as trec_eval prints it: ``%6.4f`` (NaN as C prints 0.0 / 0.0, ``-nan``),
    counts as integers, ``relstring`` quoted."""
    if column.special == "relstring":
        return f"'{value}'"
    if value != value:
        return "  -nan"
    if column.integer and not zscore:
        return str(int(value))
    return f"{value:.4f}"


def line(name: str, qid: str, text: str, *, zscore: bool = False) -> str:
    """trec_eval's layout: ``%-22s\\t%s\\t%s`` (``Z%-22s…`` for z-scores)."""
    return f"{'Z' if zscore else ''}{name:<22}\t{qid}\t{text}"


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
    zscore: bool = False,
):
    """trec_eval's output lines: with ``queries`` (``-q``) every kept query's values in
    query order, then (unless ``summary`` is off, ``-n``) the ``all`` lines, whose values
    ``overrides`` may set by name. ``zscore``: the values are z-scores (``zscored``),
    printed as trec_eval's ``-Z`` prints them."""
    overrides = overrides or {}
    if queries:
        for index in np.flatnonzero(kept).tolist():
            for column in columns:
                if column.per_query:
                    value = per_query[column.name][index]
                    z = zscore and column.special not in TEXT_ONLY
                    text = formatted(column, value, zscore=z)
                    yield line(column.name, qids[index], text, zscore=z)
    if not summary:
        return
    for column in columns:
        if column.summary == "none":
            continue
        if column.summary == "runid":
            yield line("runid", "all", runid)
        else:
            value = overrides.get(column.name)
            if value is None:
                value = summarise(column, per_query.get(column.name), kept, logs=zscore)
            text = formatted(column, value, zscore=zscore)
            yield line(column.name, "all", text, zscore=zscore)
