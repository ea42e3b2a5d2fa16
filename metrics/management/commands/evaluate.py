"""`manage.py evaluate QRELS RUN`: trec_eval-exact measures from files, no database."""

from __future__ import annotations

import json

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from formats import FileRejected, encode, read_qrels, read_run
from numerics.measures import evaluate_arrays, parse_measure

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "Success@10"]


def evaluate_files(
    qrels_path: str,
    run_path: str,
    measures: list[str],
    *,
    run_queries_only: bool = False,
    rel: int = 1,
) -> dict:
    """``{"mean": {measure: value}, "per_query": {qid: {measure: value}}}`` for two files.

    Means are over every query of the qrels, a query missing from the run counting 0
    (trec_eval -c), unless ``run_queries_only`` (trec_eval's default: queries in both).
    """
    for name in measures:
        parse_measure(name)  # unknown names fail before any file is read
    encoded = encode(read_qrels(qrels_path), read_run(run_path))
    values = evaluate_arrays(
        run_query=encoded.run_query,
        run_item=encoded.run_item,
        run_score=encoded.run_score,
        qrel_query=encoded.qrel_query,
        qrel_item=encoded.qrel_item,
        qrel_grade=encoded.qrel_grade,
        n_queries=len(encoded.qids),
        measures=measures,
        rel_default=rel,
    )
    keep = encoded.in_run if run_queries_only else np.ones(len(encoded.qids), dtype=bool)
    mean = {m: float(values[m][keep].mean()) if keep.any() else 0.0 for m in measures}
    per_query = {
        qid: {m: float(values[m][index]) for m in measures}
        for index, qid in enumerate(encoded.qids)
        if keep[index]
    }
    return {"mean": mean, "per_query": per_query}


class Command(BaseCommand):
    help = (
        "Evaluate a run file against a qrels file (TREC or JSONL) with trec_eval's "
        "conventions; prints 'measure qid value' lines, 'all' for the mean."
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
            help=f"e.g. nDCG@10, P(rel=2)@5 (default: {' '.join(DEFAULT_MEASURES)})",
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
        measures = options["measures"] or DEFAULT_MEASURES
        try:
            result = evaluate_files(
                options["qrels"],
                options["run"],
                measures,
                run_queries_only=options["run_queries_only"],
                rel=options["rel"],
            )
        except FileRejected as error:
            raise CommandError(f"{error.source}:\n{error}") from None
        except ValueError as error:
            raise CommandError(str(error)) from None
        if options["json"]:
            if not options["per_query"]:
                result = {"mean": result["mean"], "per_query": result["per_query"]}
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1))
            return
        width = max(len(m) for m in measures) + 2
        if options["per_query"]:
            for qid, values in result["per_query"].items():
                for measure in measures:
                    value = _value(measure, values[measure])
                    self.stdout.write(f"{measure:<{width}}\t{qid}\t{value}")
        for measure in measures:
            value = _value(measure, result["mean"][measure])
            self.stdout.write(f"{measure:<{width}}\tall\t{value}")


COUNTS = ("NumRel", "NumRet", "NumRelRet")


def _value(measure: str, value: float) -> str:
    """trec_eval's formatting: counts as integers, everything else with 4 decimals."""
    if parse_measure(measure).family in COUNTS:
        return str(round(value))
    return f"{value:.4f}"
