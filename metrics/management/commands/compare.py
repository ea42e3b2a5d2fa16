"""`manage.py compare QRELS RUN1 RUN2 ... -m ... [--baseline RUN] [--format ...]`."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from metrics.file_commands import FileCommand
from metrics.run_comparison import FORMATS, compare_files, render
from numerics.measures.trec_eval import columns_for

DEFAULT_MEASURES = ["AP", "nDCG@10", "P@10", "R@100", "RR"]


class Command(FileCommand):
    help = (
        "Compare run files on one qrels file: runs × measures, with paired randomization "
        "and t-tests against the baseline (Holm's correction), as on the web comparison."
    )

    def add_arguments(self, parser):
        parser.add_argument("qrels")
        parser.add_argument("runs", nargs="+", metavar="RUN")
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            metavar="MEASURE",
            help=f"ir_measures or trec_eval name (default: {' '.join(DEFAULT_MEASURES)})",
        )
        parser.add_argument(
            "--baseline", help="the run the others are tested against (default: the first)"
        )
        parser.add_argument("--format", choices=FORMATS, default="text")
        parser.add_argument(
            "--alpha", type=float, default=0.05, help="significance level after Holm's correction"
        )
        parser.add_argument(
            "--rel", type=int, default=1, help="lowest relevant grade for binary measures"
        )

    def handle(self, *args, **options):
        runs = options["runs"]
        if len(runs) < 2:
            raise CommandError("give at least two runs to compare")
        baseline = 0
        if options["baseline"]:
            matches = [
                i
                for i, r in enumerate(runs)
                if r == options["baseline"] or Path(r).name == options["baseline"]
            ]
            if not matches:
                raise CommandError(f"the baseline {options['baseline']!r} is not among the runs")
            baseline = matches[0]
        if len({Path(r).name for r in runs}) < len(runs):
            raise CommandError("two runs have the same file name; rename one")
        columns = [c for name in options["measures"] or DEFAULT_MEASURES for c in columns_for(name)]
        result = compare_files(
            options["qrels"],
            runs,
            columns,
            baseline=baseline,
            rel=options["rel"],
            alpha=options["alpha"],
        )
        self.write_lines([render(result, options["format"])])
