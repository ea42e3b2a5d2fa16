"""`manage.py evaluate QRELS RUN`: trec_eval-exact measures from files, no database."""

from __future__ import annotations

import json

from metrics.file_commands import FileCommand
from metrics.trec_files import evaluate_judged, judge_files
from numerics.measures.trec_eval import columns_for

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "Success@10"]


def evaluate_files(
    qrels_path: str,
    run_path: str,
    measures: list[str],
    *,
    run_queries_only: bool = False,
    rel: int = 1,
) -> dict:
    """``{"mean": {measure: value}, "sum": {count: value}, "per_query": {qid: {…}}}`` for
    two files (see ``metrics.trec_files.evaluate_judged``)."""
    columns = [c for name in measures for c in columns_for(name)]  # names fail first
    return evaluate_judged(
        judge_files(qrels_path, run_path), columns, rel=rel, run_queries_only=run_queries_only
    )


class Command(FileCommand):
    help = (
        "Evaluate a run file against a qrels file (TREC, JSONL, CSV or XLSX, .gz too) with "
        "trec_eval's conventions; prints 'measure qid value' lines, 'all' for the mean (the "
        "sum for counts). Measures by ir_measures name (nDCG@10) or trec_eval name "
        "(ndcg_cut.10, map, P_5)."
    )

    def add_arguments(self, parser):
        parser.add_argument("qrels")
        parser.add_argument("run")
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            metavar="MEASURE",
            help=f"e.g. nDCG@10, P(rel=2)@5, map, P.5,10 (default: {' '.join(DEFAULT_MEASURES)})",
        )
        parser.add_argument("--per-query", action="store_true", help="print every query too")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--run-queries-only",
            action="store_true",
            help="average over queries in both files (trec_eval without -c)",
        )
        parser.add_argument(
            "--rel", type=int, default=1, help="lowest relevant grade for binary measures"
        )

    def handle(self, *args, **options):
        columns = [c for name in options["measures"] or DEFAULT_MEASURES for c in columns_for(name)]
        columns = [c for c in columns if c.summary != "runid"]
        result = evaluate_judged(
            judge_files(options["qrels"], options["run"]),
            columns,
            rel=options["rel"],
            run_queries_only=options["run_queries_only"],
        )
        if options["json"]:
            if not options["per_query"]:
                result.pop("per_query")
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1))
            return
        width = max(len(c.name) for c in columns) + 2
        lines = []
        if options["per_query"]:
            for qid, values in result["per_query"].items():
                lines += [
                    f"{c.name:<{width}}\t{qid}\t{_shown(c, values[c.name])}"
                    for c in columns
                    if c.per_query
                ]
        for c in columns:
            value = result["sum"][c.name] if c.name in result["sum"] else result["mean"][c.name]
            lines.append(f"{c.name:<{width}}\tall\t{_shown(c, value)}")
        self.write_lines(lines)


def _shown(column, value: float) -> str:
    """trec_eval's formatting: counts as integers, everything else with 4 decimals."""
    return str(int(value)) if column.integer else f"{value:.4f}"
