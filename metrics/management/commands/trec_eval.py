"""`manage.py trec_eval [-q] [-c] [-l N] [-m MEASURE[.params]]... [-n] QRELS RUN`."""

from __future__ import annotations

from metrics.file_commands import FileCommand
from metrics.trec_files import judge_files, trec_eval_lines
from numerics.measures.trec_eval import supported, trec_columns


class Command(FileCommand):
    help = (
        "trec_eval's command line and output: evaluate RUN against QRELS with trec_eval's "
        f"measure names and defaults. Measures: {supported()}."
    )

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="qrels file (TREC, JSONL, CSV or XLSX; .gz too)")
        parser.add_argument("run", help="run file (TREC, JSONL, CSV or XLSX; .gz too)")
        parser.add_argument(
            "-q", action="store_true", dest="per_query", help="print every query's values too"
        )
        parser.add_argument(
            "-c",
            action="store_true",
            dest="complete",
            help="average over every qrels query (missing ones count 0)",
        )
        parser.add_argument(
            "-l",
            type=int,
            default=1,
            dest="level",
            metavar="N",
            help="lowest relevant grade (default 1)",
        )
        parser.add_argument(
            "-m",
            action="append",
            dest="measures",
            default=[],
            metavar="MEASURE[.params]",
            help="e.g. map, P.5,10, ndcg_cut.10, official, all_trec",
        )
        parser.add_argument(
            "-n", action="store_true", dest="no_summary", help="no summary (all) lines"
        )

    def handle(self, *args, **options):
        columns = trec_columns(options["measures"])
        judged = judge_files(options["qrels"], options["run"])
        self.write_lines(
            trec_eval_lines(
                judged,
                columns,
                level=options["level"],
                complete=options["complete"],
                queries=options["per_query"],
                summary=not options["no_summary"],
            )
        )
