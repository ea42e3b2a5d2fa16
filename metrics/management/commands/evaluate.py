"""`manage.py evaluate QRELS RUN`: trec_eval-exact measures from files, no database."""

from __future__ import annotations

import json
import math

from django.core.management.base import CommandError

from metrics.file_commands import FileCommand
from metrics.nugget_files import evaluate_nugget_files
from metrics.trec_files import evaluate_joined, join_files
from numerics.measures.trec_eval import columns_for
from numerics.nuggets import is_nugget_measure, parse_nugget_measure

DEFAULT_MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR", "Success@10"]


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
        parser.add_argument(
            "--nuggets",
            metavar="FILE",
            help="the nuggets and the units covering them (export_nuggets --level: JSONL, or "
            "ndeval qrels 'qid subtopic docid rel') for NuggetRecall@k, "
            "NuggetRecall(vital)@k, StRecall@k, alpha_nDCG@k, ERR_IA@k",
        )

    def handle(self, *args, **options):
        requested = options["measures"] or DEFAULT_MEASURES
        nugget_names = [name for name in requested if is_nugget_measure(name)]
        for name in nugget_names:
            parse_nugget_measure(name)  # a bad name fails before any file is read
        if nugget_names and not options["nuggets"]:
            raise CommandError(f"{nugget_names[0]} needs --nuggets FILE")
        names = [name for name in requested if not is_nugget_measure(name)]
        columns = [c for name in names for c in columns_for(name)]
        columns = [c for c in columns if c.summary != "runid"]
        result = {"mean": {}, "sum": {}, "per_query": {}}
        if columns:
            result = evaluate_joined(
                join_files(options["qrels"], options["run"]),
                columns,
                rel=options["rel"],
                run_queries_only=options["run_queries_only"],
            )
        nugget_lines = []
        if nugget_names:
            qids, values, without = evaluate_nugget_files(
                options["run"], options["nuggets"], nugget_names
            )
            for name in nugget_names:
                kept = [v for v in values[name].tolist() if not math.isnan(v)]
                result["mean"][name] = sum(kept) / len(kept) if kept else None
                for qid, value in zip(qids, values[name].tolist(), strict=True):
                    if not math.isnan(value):
                        result["per_query"].setdefault(qid, {})[name] = value
                        if options["per_query"]:
                            nugget_lines.append(f"{name}\t{qid}\t{value:.4f}")
                mean = result["mean"][name]
                nugget_lines.append(f"{name}\tall\t{'-' if mean is None else f'{mean:.4f}'}")
                # Standard error, so the output keeps trec_eval's three columns. Counted:
                # the nugget file's queries and the run's queries without nuggets.
                self.stderr.write(
                    f"{name}: over {len(kept)} of {len(qids) + without} queries "
                    "(those without nuggets left out)"
                )
        if options["json"]:
            if not options["per_query"]:
                result.pop("per_query")
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1))
            return
        width = max((len(c.name) for c in columns), default=0) + 2
        lines = []
        if options["per_query"]:
            for qid, values in result["per_query"].items():
                lines += [
                    f"{c.name:<{width}}\t{qid}\t{_shown(c, values[c.name])}"
                    for c in columns
                    if c.per_query and c.name in values
                ]
        for c in columns:
            value = result["sum"][c.name] if c.name in result["sum"] else result["mean"][c.name]
            lines.append(f"{c.name:<{width}}\tall\t{_shown(c, value)}")
        self.write_lines(lines + nugget_lines)


def _shown(column, value: float) -> str:
    """trec_eval's formatting: counts as integers, everything else with 4 decimals."""
    return str(int(value)) if column.integer else f"{value:.4f}"
