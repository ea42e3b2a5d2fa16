"""Run files against qrels files, without the database: what `trec_eval`, `evaluate` and
`compare` print. No Django import, so those commands start without the web stack."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from formats import FileRejected, LineErrors, Qrels, encode, factorize, read_qrels, read_run
from formats.arrays import RUN_LAYOUTS, run_format
from formats.columnar import RunFrame, read_trec_run
from formats.errors import LINE, define, gettext_noop
from formats.records import NO_LABELS
from formats.trec import numbers, read_table
from numerics.measures.ranking import JudgedRows, judged_rows, judged_rows_of_run
from numerics.measures.trec_eval import (
    Column,
    report_lines,
    restricted,
    summarise,
    values,
    zscored,
)
from numerics.preferences import preference_values, query_preferences

NO_COMMON_QUERY = define(
    "evaluate.no_common_query",
    gettext_noop(
        "no query of the run is in the qrels (trec_eval: no queries with both results and "
        "relevance info)"
    ),
)

RUN_FOR_GROUPS = define(
    "trec_eval.run_for_groups",
    gettext_noop("with judgment groups (-R qrels_jg) the run must be a TREC or TSV run file"),
)
ZSCORE_LINE = define(
    "trec_eval.zscore_line",
    gettext_noop("expected 'query measure mean stddev' (two numbers last), found %(found)s"),
)


@dataclass(frozen=True)
class JoinedRun:
    """A run file joined with a qrels file: the qrels' queries (``qids``, byte order),
    which of them the run answers, the judged rows and the run's tag."""

    qids: list[str]
    in_run: np.ndarray
    rows: JudgedRows
    runid: str


def join_files(qrels_path: str | Path, run_path: str | Path) -> JoinedRun:
    """Read and join two files; a file that cannot be read, or a run that answers no query
    of the qrels, raises ``FileRejected``."""
    return join_run(read_qrels(qrels_path), run_path)


def join_run(qrels: Qrels, run_path: str | Path) -> JoinedRun:
    """A run file joined with qrels already read (``compare`` reads them once). A TREC or
    TSV run (a path or ``-``, plain or gzip) is read as a ``RunFrame`` (no global ordering
    of ids), JSONL, JSON, CSV and XLSX row by row; both give the same rows."""
    fmt = run_format(run_path)
    if fmt in RUN_LAYOUTS:
        return join_frame(qrels, read_trec_run(run_path, RUN_LAYOUTS[fmt]), run_path)
    ranked = read_run(run_path, fmt)
    encoded = encode(qrels, ranked)
    if not encoded.in_run.any():
        raise _no_common_query(run_path)
    rows = judged_rows(
        run_query=encoded.run_query,
        run_item=encoded.run_item,
        run_score=encoded.run_score,
        qrel_query=encoded.qrel_query,
        qrel_item=encoded.qrel_item,
        qrel_grade=encoded.qrel_grade,
        n_queries=len(encoded.qids),
    )
    return JoinedRun(encoded.qids, encoded.in_run, rows, ranked.tag)


def read_zscores(path: str | Path) -> dict[str, dict[str, tuple[float, float]]]:
    """trec_eval's ``-Z`` file: lines ``qid measure mean stddev`` (blank lines skipped)
    as qid → measure → (mean, stddev); a line otherwise raises ``FileRejected`` naming
    every bad line."""
    table: dict[str, dict[str, tuple[float, float]]] = {}
    problems = []
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            fields = raw.split()
            if not fields:
                continue
            try:
                if len(fields) != 4:
                    raise ValueError
                qid, measure = fields[0].decode(), fields[1].decode()
                table.setdefault(qid, {})[measure] = (float(fields[2]), float(fields[3]))
            except ValueError:
                found = " ".join(f.decode(errors="replace") for f in fields)[:80]
                problems.append(LINE(line=number, problem=ZSCORE_LINE(found=found)))
    if problems:
        raise FileRejected(problems, source=Path(path).name)
    return table


def trec_eval_lines(
    joined: JoinedRun,
    columns: list[Column],
    *,
    level: int = 1,
    complete: bool = False,
    queries: bool = False,
    summary: bool = True,
    max_per_topic: int | None = None,
    judged_only: bool = False,
    collection: int = 0,
    zscores: dict | None = None,
) -> list[str]:
    """trec_eval's output for ``columns``: averaged over the queries of the run that the
    qrels judge, or over every qrels query with ``complete`` (``-c``); ``-M`` and ``-J``
    as ``restricted`` says; ``collection`` is ``-N``; ``zscores`` (``read_zscores``)
    turns every value into a z-score (``-Z``). With ``-c``, trec_eval's ``num_rel``
    summary counts every judgment above grade 0 whatever the level (``m_num_rel.c``);
    so does this."""
    kept = np.ones(len(joined.qids), dtype=bool) if complete else joined.in_run
    rows = restricted(joined.rows, max_per_topic=max_per_topic, judged_only=judged_only)
    per_query = values(rows, columns, level, collection=collection, answered=joined.in_run)
    overrides = {}
    if zscores is not None:
        per_query = zscored(columns, per_query, joined.qids, zscores)
    elif complete:
        overrides["num_rel"] = float(np.count_nonzero(joined.rows.qrel_grade > 0))
    return list(
        report_lines(
            columns,
            per_query,
            joined.qids,
            kept,
            runid=joined.runid,
            queries=queries,
            summary=summary,
            overrides=overrides,
            zscore=zscores is not None,
        )
    )


def evaluate_joined(
    joined: JoinedRun, columns: list[Column], *, rel: int = 1, run_queries_only: bool = False
) -> dict:
    """``{"mean": {m: v}, "sum": {count: v}, "per_query": {qid: {m: v}}}``: means over
    every qrels query (a query missing from the run counting 0, trec_eval -c) unless
    ``run_queries_only``; counts are also summed, as trec_eval's ``all`` line shows them;
    ``gm_map``'s mean is geometric."""
    columns = [c for c in columns if c.summary != "runid"]
    kept = joined.in_run if run_queries_only else np.ones(len(joined.qids), dtype=bool)
    per_query = values(joined.rows, columns, rel)
    mean, total = {}, {}
    for column in columns:
        if column.summary == "sum":
            total[column.name] = summarise(column, per_query[column.name], kept)
            n = int(kept.sum())
            mean[column.name] = total[column.name] / n if n else 0.0
        else:
            mean[column.name] = summarise(column, per_query[column.name], kept)
    shown = [c for c in columns if c.per_query]
    return {
        "mean": mean,
        "sum": total,
        "per_query": {
            joined.qids[i]: {c.name: float(per_query[c.name][i]) for c in shown}
            for i in np.flatnonzero(kept).tolist()
        },
    }


@dataclass(frozen=True)
class GroupedRun:
    """A run judged by several judgment groups (trec_eval's ``qrels_jg``): one
    ``JoinedRun`` per group (its own queries), and over every query of any group
    (``qids``, byte order) which the run answers."""

    qids: list[str]
    in_run: np.ndarray
    groups: list[JoinedRun]
    runid: str


def join_group_files(qrels_path: str | Path, run_path: str | Path) -> GroupedRun:
    """A ``qrels_jg`` file (``qid group docid grade``: each group judges on its own)
    and a run: the run joined with each group's judgments."""
    (qid, group, item, grade_text), line = read_table(qrels_path, "qrels_jg")
    errors = LineErrors()
    grade, _ = numbers(grade_text, line, "int", "grade", errors)
    errors.raise_if_any(source=Path(qrels_path).name)
    if not line.size:
        raise FileRejected([NO_LABELS()], source=Path(qrels_path).name)
    fmt = run_format(run_path)
    if fmt in RUN_LAYOUTS:
        frame = read_trec_run(run_path, RUN_LAYOUTS[fmt])
    else:
        raise FileRejected([RUN_FOR_GROUPS()], source=Path(run_path).name)
    all_qids, _ = factorize(qid)
    in_run = np.zeros(all_qids.size, dtype=bool)
    joined_groups = []
    for name in np.unique(group).tolist():
        mine = group == name
        qids, query = factorize(qid[mine])
        items, item_code = factorize(item[mine])
        qrels = Qrels(qids, items, query, item_code, grade[mine], line[mine])
        try:
            joined = join_frame(qrels, frame, run_path)
        except FileRejected:
            continue  # no query of this group in the run
        joined_groups.append(joined)
        in_run[np.searchsorted(all_qids, qids[joined.in_run])] = True
    if not in_run.any():
        raise _no_common_query(run_path)
    names = [q.decode() for q in all_qids]
    return GroupedRun(names, in_run, joined_groups, frame.tag)


def group_lines(
    grouped: GroupedRun,
    columns: list[Column],
    *,
    level: int = 1,
    complete: bool = False,
    queries: bool = False,
    summary: bool = True,
    max_per_topic: int | None = None,
    judged_only: bool = False,
) -> list[str]:
    """trec_eval's output with ``-R qrels_jg``: each measure computed against every
    judgment group of a query, then averaged over those groups (``m_map_avgjg.c``,
    ``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``); then over queries as ``trec_eval_lines``
    does."""
    index = {q: i for i, q in enumerate(grouped.qids)}
    totals = {c.name: np.zeros(len(grouped.qids)) for c in columns if c.summary != "runid"}
    count = np.zeros(len(grouped.qids))
    for joined in grouped.groups:
        rows = restricted(joined.rows, max_per_topic=max_per_topic, judged_only=judged_only)
        at = np.array([index[q] for q in joined.qids], dtype=np.int64)
        count[at] += 1
        for name, value in values(rows, columns, level, answered=joined.in_run).items():
            totals[name][at] += value
    per_query = {
        name: np.where(count > 1, total / np.maximum(count, 1), total)
        for name, total in totals.items()
    }
    kept = np.ones(len(grouped.qids), dtype=bool) if complete else grouped.in_run
    return list(
        report_lines(
            columns,
            per_query,
            grouped.qids,
            kept,
            runid=grouped.runid,
            queries=queries,
            summary=summary,
        )
    )


@dataclass(frozen=True)
class PreferenceRun:
    """A run against preference judgments (``-R prefs`` or ``-R qrels_prefs``): each
    query's lines ``(group, subgroup, level, docno)`` and the judged documents the run
    retrieves, as ``(rank, docno)`` in rank order."""

    qids: list[str]
    in_run: np.ndarray
    lines: list[list[tuple[bytes, bytes, float, bytes]]]
    retrieved: list[list[tuple[int, bytes]]]
    runid: str


def join_preference_files(prefs_path: str | Path, run_path: str | Path, fmt: str) -> PreferenceRun:
    """A ``prefs`` file (``qid group subgroup docid level``) or, with ``fmt``
    "qrels_prefs", a qrels file read as preferences (``qid group docid grade``: one
    subgroup per group), and a run. The run is ranked as ``form_prefs_counts.c`` ranks
    it: score descending, ties by docno ascending (not descending, as for the other
    measures)."""
    source = Path(prefs_path).name
    if fmt == "prefs":
        (qid, group, sub, doc, level_text), line = read_table(prefs_path, "prefs")
    else:
        (qid, group, doc, level_text), line = read_table(prefs_path, "qrels_jg")
        sub = np.full(qid.size, b"0")
    errors = LineErrors()
    level, _ = numbers(level_text, line, "float", "level", errors)
    errors.raise_if_any(source=source)
    if not line.size:
        raise FileRejected([NO_LABELS()], source=source)
    qids, query = factorize(qid)
    lines: list[list] = [[] for _ in range(qids.size)]
    for q, g, s_, lv, d in zip(
        query.tolist(), group.tolist(), sub.tolist(), level.tolist(), doc.tolist(), strict=True
    ):
        lines[q].append((g, s_, lv, d))
    ranked = read_run(run_path)
    order = np.lexsort((ranked.item, -ranked.score, ranked.query))
    run_query = ranked.query[order]
    bounds = np.searchsorted(run_query, np.arange(ranked.qids.size + 1))
    in_run = np.zeros(qids.size, dtype=bool)
    retrieved: list[list] = [[] for _ in range(qids.size)]
    for q, name in enumerate(qids.tolist()):
        at = int(np.searchsorted(ranked.qids, name))
        if at >= ranked.qids.size or ranked.qids[at] != name:
            continue
        in_run[q] = True
        judged = {d for *_, d in lines[q]}
        docs = ranked.items[ranked.item[order[bounds[at] : bounds[at + 1]]]].tolist()
        retrieved[q] = [(rank, d) for rank, d in enumerate(docs, 1) if d in judged]
    if not in_run.any():
        raise _no_common_query(run_path)
    names = [q.decode() for q in qids.tolist()]
    return PreferenceRun(names, in_run, lines, retrieved, ranked.tag)


def preference_lines(
    prefs: PreferenceRun,
    columns: list[Column],
    *,
    complete: bool = False,
    queries: bool = False,
    summary: bool = True,
    max_per_topic: int | None = None,
) -> list[str]:
    """trec_eval's output of the preference measures (``numerics.preferences``); ``-M``
    keeps each query's first ``max_per_topic`` results."""
    n = len(prefs.qids)
    per_query = {c.name: np.zeros(n) for c in columns if c.summary != "runid"}
    if "num_q" in per_query:
        per_query["num_q"] = np.ones(n)
    wanted = [c.name for c in columns if c.special == "prefs"]
    limit = max_per_topic if max_per_topic is not None else math.inf
    for q in range(n):
        retrieved = [d for rank, d in prefs.retrieved[q] if rank <= limit]
        found = preference_values(query_preferences(prefs.lines[q], retrieved))
        for name in wanted:
            per_query[name][q] = found[name]
    kept = np.ones(n, dtype=bool) if complete else prefs.in_run
    return list(
        report_lines(
            columns,
            per_query,
            prefs.qids,
            kept,
            runid=prefs.runid,
            queries=queries,
            summary=summary,
        )
    )


def _no_common_query(run_path: str | Path) -> FileRejected:
    return FileRejected([NO_COMMON_QUERY()], source=Path(run_path).name)


def join_frame(qrels: Qrels, frame: RunFrame, run_path: str | Path) -> JoinedRun:
    """A run's frame joined with the qrels by hash (``RunFrame.matches``)."""
    n_queries = qrels.qids.size
    at = np.minimum(np.searchsorted(qrels.qids, frame.qids), max(n_queries - 1, 0))
    known = qrels.qids[at] == frame.qids if n_queries else np.zeros(frame.qids.size, bool)
    # Queries the qrels lack keep distinct negative codes (their rows are never qrels).
    code = np.where(known, at, -1 - np.arange(frame.qids.size)).astype(np.int32)
    query = code[frame.query]
    in_run = np.zeros(n_queries, dtype=bool)
    in_run[code[code >= 0]] = True
    if not in_run.any():
        raise _no_common_query(run_path)
    rows, qrel = frame.matches(query, qrels.query, _qrel_ids(qrels))
    judged_rows_ = judged_rows_of_run(
        query=query,
        score=frame.score,
        judged_row=rows,
        judged_qrel=qrel,
        qrel_query=qrels.query,
        qrel_grade=qrels.grade,
        n_queries=n_queries,
        tie_codes=frame.tie_codes,
    )
    return JoinedRun([q.decode() for q in qrels.qids], in_run, judged_rows_, frame.tag)


def _qrel_ids(qrels: Qrels):
    """The id of every qrels row, as polars strings (the columnar reader's ids)."""
    import polars as pl

    names = pl.Series([i.decode() for i in qrels.items.tolist()], dtype=pl.String)
    return names.gather(qrels.item)
