"""Several run files against one qrels file: the runs × measures table with significance
against a baseline (``manage.py compare``), as text, JSON, CSV or LaTeX. No Django."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

from formats import read_qrels
from numerics.measures.trec_eval import Column, summarise, values
from numerics.significance import against_baseline

from .trec_files import judge_run

FORMATS = ("text", "json", "csv", "latex")
# Markers after a value: significantly different from the baseline after Holm's correction.
RANDOMIZATION, T_TEST = "†", "‡"


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
    paired randomization and t-tests against run ``baseline`` and Holm's correction over
    the runs compared, per measure — the web comparison's statistics."""
    judged = read_qrels(qrels_path)
    runs = [judge_run(judged, path) for path in run_paths]
    names = [Path(p).name for p in run_paths]
    columns = [c for c in columns if c.per_query and c.summary != "runid"]
    per_run = [values(run.rows, columns, rel) for run in runs]
    kept = np.ones(len(runs[0].qids), dtype=bool)
    table: dict[str, dict] = {name: {} for name in names}
    others = [i for i in range(len(runs)) if i != baseline]
    for column in columns:
        base = per_run[baseline][column.name]
        tests = against_baseline(base, [per_run[i][column.name] for i in others], alpha=alpha)
        for i, run_values in enumerate(per_run):
            cell = {"value": _shown_value(column, run_values[column.name], kept)}
            if i != baseline:
                test = tests[others.index(i)]
                cell |= {
                    k: test[k]
                    for k in (
                        "delta",
                        "p_randomization",
                        "p_holm",
                        "p_t",
                        "p_t_holm",
                        "significant",
                        "significant_t",
                    )
                }
            table[names[i]][column.name] = cell
    return {
        "qrels": Path(qrels_path).name,
        "queries": len(runs[0].qids),
        "baseline": names[baseline],
        "alpha": alpha,
        "measures": [c.name for c in columns],
        "runs": table,
    }


def _shown_value(column: Column, per_query: np.ndarray, kept: np.ndarray) -> float:
    """The mean (geometric for gm_map); counts are shown as means per query here."""
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
