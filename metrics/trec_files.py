"""Run files against qrels files, without the database: what `trec_eval`, `evaluate` and
`compare` print. No Django import, so those commands start without the web stack."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from formats import FileRejected, Judged, encode, read_qrels, read_run
from formats.arrays import RUN_LAYOUTS, run_format
from formats.columnar import RunFrame, read_trec_run
from formats.errors import define, gettext_noop
from numerics.measures.ranking import JudgedRows, judged_rows, judged_rows_of_run
from numerics.measures.trec_eval import Column, report_lines, restricted, summarise, values

NO_COMMON_QUERY = define(
    "evaluate.no_common_query",
    gettext_noop(
        "no query of the run is in the qrels (trec_eval: no queries with both results and "
        "relevance info)"
    ),
)


@dataclass(frozen=True)
class JudgedRun:
    """A run file joined with a qrels file: the qrels' queries (``qids``, byte order),
    which of them the run answers, the judged rows and the run's tag."""

    qids: list[str]
    in_run: np.ndarray
    rows: JudgedRows
    runid: str


def judge_files(qrels_path: str | Path, run_path: str | Path) -> JudgedRun:
    """Read and join two files; a file that cannot be read, or a run that answers no query
    of the qrels, raises ``FileRejected``."""
    return judge_run(read_qrels(qrels_path), run_path)


def judge_run(judged: Judged, run_path: str | Path) -> JudgedRun:
    """A run file joined with qrels already read (``compare`` reads them once). A TREC or
    TSV run (a path or ``-``, plain or gzip) is read as a ``RunFrame`` (no global ordering
    of ids), JSONL, JSON, CSV and XLSX row by row; both give the same rows."""
    fmt = run_format(run_path)
    if fmt in RUN_LAYOUTS:
        return judge_frame(judged, read_trec_run(run_path, RUN_LAYOUTS[fmt]), run_path)
    ranked = read_run(run_path, fmt)
    encoded = encode(judged, ranked)
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
    return JudgedRun(encoded.qids, encoded.in_run, rows, ranked.tag)


def trec_eval_lines(
    judged: JudgedRun,
    columns: list[Column],
    *,
    level: int = 1,
    complete: bool = False,
    queries: bool = False,
    summary: bool = True,
    max_per_topic: int | None = None,
    judged_only: bool = False,
) -> list[str]:
    """trec_eval's output for ``columns``: averaged over the queries of the run that the
    qrels judge, or over every qrels query with ``complete`` (``-c``); ``-M`` and ``-J``
    as ``restricted`` says. With ``-c``, trec_eval's ``num_rel`` summary counts every
    judgment above grade 0 whatever the level (``m_num_rel.c``); so does this."""
    kept = np.ones(len(judged.qids), dtype=bool) if complete else judged.in_run
    rows = restricted(judged.rows, max_per_topic=max_per_topic, judged_only=judged_only)
    per_query = values(rows, columns, level)
    overrides = {}
    if complete:
        overrides["num_rel"] = float(np.count_nonzero(judged.rows.qrel_grade > 0))
    return list(
        report_lines(
            columns,
            per_query,
            judged.qids,
            kept,
            runid=judged.runid,
            queries=queries,
            summary=summary,
            overrides=overrides,
        )
    )


def evaluate_judged(
    judged: JudgedRun, columns: list[Column], *, rel: int = 1, run_queries_only: bool = False
) -> dict:
    """``{"mean": {m: v}, "sum": {count: v}, "per_query": {qid: {m: v}}}``: means over
    every qrels query (a query missing from the run counting 0, trec_eval -c) unless
    ``run_queries_only``; counts are also summed, as trec_eval's ``all`` line shows them;
    ``gm_map``'s mean is geometric."""
    columns = [c for c in columns if c.summary != "runid"]
    kept = judged.in_run if run_queries_only else np.ones(len(judged.qids), dtype=bool)
    per_query = values(judged.rows, columns, rel)
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
            judged.qids[i]: {c.name: float(per_query[c.name][i]) for c in shown}
            for i in np.flatnonzero(kept).tolist()
        },
    }


def _no_common_query(run_path: str | Path) -> FileRejected:
    return FileRejected([NO_COMMON_QUERY()], source=Path(run_path).name)


def judge_frame(judged: Judged, frame: RunFrame, run_path: str | Path) -> JudgedRun:
    """A run's frame joined with the qrels by hash (``RunFrame.matches``)."""
    n_queries = judged.qids.size
    at = np.minimum(np.searchsorted(judged.qids, frame.qids), max(n_queries - 1, 0))
    known = judged.qids[at] == frame.qids if n_queries else np.zeros(frame.qids.size, bool)
    # Queries the qrels lack keep distinct negative codes (their rows are never judged).
    code = np.where(known, at, -1 - np.arange(frame.qids.size)).astype(np.int32)
    query = code[frame.query]
    in_run = np.zeros(n_queries, dtype=bool)
    in_run[code[code >= 0]] = True
    if not in_run.any():
        raise _no_common_query(run_path)
    rows, qrel = frame.matches(query, judged.query, _qrel_ids(judged))
    judged_rows_ = judged_rows_of_run(
        query=query,
        score=frame.score,
        judged_row=rows,
        judged_qrel=qrel,
        qrel_query=judged.query,
        qrel_grade=judged.grade,
        n_queries=n_queries,
        tie_codes=frame.tie_codes,
    )
    return JudgedRun([q.decode() for q in judged.qids], in_run, judged_rows_, frame.tag)


def _qrel_ids(judged: Judged):
    """The id of every qrels row, as polars strings (the columnar reader's ids)."""
    import polars as pl

    names = pl.Series([i.decode() for i in judged.items.tolist()], dtype=pl.String)
    return names.gather(judged.item)
