"""Several run files against one qrels file: the runs × measures table with significance
against a baseline (``manage.py compare``), as text, JSON, CSV or LaTeX. No Django."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from formats import read_qrels
from numerics.comparison import SEED, compare
from numerics.measures.trec_eval import Column, summarise, values

from .trec_files import join_run

FORMATS = ("text", "json", "csv", "latex")
# Markers after a value: significantly different from the baseline after Holm's correction.
RANDOMIZATION, T_TEST = "†", "‡"


@dataclass(frozen=True)
class RunFile:
    """A run compared from a file: its name."""

    name: str


SUMMARY_ONLY = (
    "%(names)s: summary only (no per-query value to test); compare tests per-query "
    "values — use trec_eval or evaluate for it"
)


def per_query_columns(columns: list[Column]) -> list[Column]:
    """The columns a comparison tests; a summary-only one (``gm_map``, ``num_q``,
    ``runid``) is refused with ``ValueError`` naming it."""
    summary = [c.name for c in columns if not c.per_query or c.summary in ("runid", "gmean")]
    if summary:
        raise ValueError(SUMMARY_ONLY % {"names": ", ".join(summary)})
    return columns


def compare_files(
    qrels_path: str | Path,
    run_paths: list[str],
    columns: list[Column],
    *,
    baseline: int = 0,
    rel: int = 1,
    alpha: float = 0.05,
) -> dict:
    """Every run's score on every measure over every qrels query (a query a run misses
    counts 0, trec_eval -c, so that all runs are paired on the same queries), with the
    comparison of the pages and the API (``numerics.comparison.compare``: queries in
    canonical order, the same seed) against run ``baseline``."""
    columns = per_query_columns(columns)
    qrels = read_qrels(qrels_path)
    runs = [join_run(qrels, path) for path in run_paths]
    files = [RunFile(Path(p).name) for p in run_paths]
    per_run = [values(run.rows, columns, rel) for run in runs]
    names = [c.name for c in columns]
    order = [baseline] + [i for i in range(len(runs)) if i != baseline]
    comparison = compare(
        runs[0].qids,
        files[baseline],
        [files[i] for i in order[1:]],
        [per_run[i] for i in order],
        names,
        alpha=alpha,
    )
    kept = np.ones(len(runs[0].qids), dtype=bool)
    table: dict[str, dict] = {f.name: {} for f in files}
    for column in columns:
        measured = comparison.measure(column.name)
        for i, run_values in enumerate(per_run):
            cell = {"value": _shown_value(column, run_values[column.name], kept)}
            if i != baseline:
                row = measured.rows[order.index(i) - 1]
                cell |= {
                    "delta": row.delta,
                    "p_randomization": row.p_randomization,
                    "p_holm": row.p_holm,
                    "p_t": row.p_t,
                    "p_t_holm": row.p_t_holm,
                    "significant": row.significant,
                    "significant_t": row.significant_t,
                }
            table[files[i].name][column.name] = cell
    return {
        "qrels": Path(qrels_path).name,
        "queries": comparison.n_queries,
        "baseline": files[baseline].name,
        "alpha": alpha,
        "seed": SEED,
        "measures": names,
        "runs": table,
    }


def _shown_value(column: Column, per_query: np.ndarray, kept: np.ndarray) -> float:
    """The mean; counts are shown as means per query here."""
    if column.summary == "sum":
        return float(per_query.mean()) if per_query.size else 0.0
    return summarise(column, per_query, kept)


def _markers(cell: dict) -> str:
    return (RANDOMIZATION if cell.get("significant") else "") + (
        T_TEST if cell.get("significant_t") else ""
    )


def render(result: dict, fmt: str) -> str:
    """The comparison in ``fmt``: text (aligned table), json, csv (one row per run and
    measure, with p-values) or latex (a tabular with the best value of each column bold)."""
    if fmt == "json":
        return json.dumps(result, ensure_ascii=False, indent=1)
    if fmt == "csv":
        return _csv(result)
    if fmt == "latex":
        return _latex(result)
    return _text(result)


def _text(result: dict) -> str:
    measures, runs = result["measures"], result["runs"]
    header = ["run", *measures]
    rows = [
        [name + (" (baseline)" if name == result["baseline"] else "")]
        + [f"{cells[m]['value']:.4f}{_markers(cells[m])}" for m in measures]
        for name, cells in runs.items()
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    lines.append(
        f"{RANDOMIZATION} paired randomization test, {T_TEST} paired t-test: different from "
        f"the baseline at p < {result['alpha']} after Holm's correction "
        f"({result['queries']} queries of {result['qrels']})"
    )
    return "\n".join(lines)


def _csv(result: dict) -> str:
    out = io.StringIO()
    fields = [
        "run",
        "measure",
        "value",
        "delta",
        "p_randomization",
        "p_holm",
        "p_t",
        "p_t_holm",
        "significant",
        "significant_t",
    ]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for name, cells in result["runs"].items():
        for measure in result["measures"]:
            writer.writerow({"run": name, "measure": measure} | cells[measure])
    return out.getvalue().rstrip("\n")


def _latex_text(text: str) -> str:
    for char, escaped in (
        ("\\", r"\textbackslash{}"),
        ("_", r"\_"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("#", r"\#"),
        ("$", r"\$"),
        ("{", r"\{"),
        ("}", r"\}"),
    ):
        text = text.replace(char, escaped)
    return text


def _latex(result: dict) -> str:
    measures, runs = result["measures"], result["runs"]
    best = {m: max(cells[m]["value"] for cells in runs.values()) for m in measures}
    lines = [
        r"\begin{tabular}{l" + "r" * len(measures) + "}",
        r"\toprule",
        " & ".join(["Run", *map(_latex_text, measures)]) + r" \\",
        r"\midrule",
    ]
    for name, cells in runs.items():
        row = [_latex_text(name)]
        for m in measures:
            value = f"{cells[m]['value']:.4f}"
            if cells[m]["value"] == best[m]:
                value = rf"\textbf{{{value}}}"
            marks = (
                _markers(cells[m]).replace(RANDOMIZATION, r"\dagger").replace(T_TEST, r"\ddagger")
            )
            row.append(value + (f"$^{{{marks}}}$" if marks else ""))
        lines.append(" & ".join(row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)
