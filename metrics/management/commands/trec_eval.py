"""`manage.py trec_eval`: trec_eval 10's command line (short and long options), names and
output, on any qrels and run file (a run may be ``-``: standard input)."""

from __future__ import annotations

import argparse
import os
import sys

from django.core.management.base import CommandError, CommandParser

from metrics.file_commands import FileCommand, assay_version
from metrics.trec_files import (
    group_lines,
    join_files,
    join_group_files,
    join_preference_files,
    preference_lines,
    read_zscores,
    trec_eval_lines,
)
from numerics.measures.trec_eval import GROUP_MEASURES, measure_columns_of, supported

TREC_EVAL_VERSION = "10.0"


class _Version(argparse.Action):
    """``-v``: the version on standard error, as trec_eval prints it; exit 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stderr.write(f"trec_eval version {TREC_EVAL_VERSION} (Assay {assay_version()})\n")
        parser.exit(0)


class Command(FileCommand):
    help = (
        "trec_eval's command line and output: evaluate RUN against QRELS with trec_eval's "
        f"measure names and defaults; RUN may be '-' (standard input). Measures: {supported()}."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        """trec_eval's own options, not Django's (``-v`` is the version here)."""
        parser = CommandParser(
            prog=f"{os.path.basename(prog_name)} {subcommand}",
            description=self.help,
            called_from_command_line=getattr(self, "_called_from_command_line", None),
            **kwargs,
        )
        parser.set_defaults(
            verbosity=1,
            settings=None,
            pythonpath=None,
            traceback=False,
            no_color=False,
            force_color=False,
            skip_checks=True,
        )
        self.add_arguments(parser)
        return parser

    def add_arguments(self, parser):
        parser.add_argument("qrels", help="qrels (TREC, TSV, JSONL, JSON, CSV or XLSX; gzip too)")
        parser.add_argument("run", help="run file, or - for standard input (gzip too)")
        parser.add_argument("-v", "--version", action=_Version, help="print the version, exit")
        parser.add_argument(
            "-q",
            "--query_eval_wanted",
            action="count",
            default=0,
            dest="per_query",
            help="print every query's values too",
        )
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            default=[],
            metavar="MEASURE[.params]",
            help="e.g. map, P.5,10, ndcg_cut.10, official, all_trec",
        )
        parser.add_argument(
            "-c",
            "--complete_rel_info_wanted",
            action="count",
            default=0,
            dest="complete",
            help="average over every qrels query (missing ones count 0)",
        )
        parser.add_argument(
            "-l",
            "--level_for_rel",
            type=int,
            default=1,
            dest="level",
            metavar="N",
            help="lowest relevant grade (default 1)",
        )
        parser.add_argument(
            "-n", "--nosummary", action="store_true", dest="no_summary", help="no summary lines"
        )
        parser.add_argument(
            "-M",
            "--Max_retrieved_per_topic",
            type=int,
            dest="max_per_topic",
            metavar="N",
            help="use only each query's first N results",
        )
        parser.add_argument(
            "-J",
            "--Judged_docs_only",
            action="store_true",
            dest="judged_only",
            help="leave out unjudged results before ranking",
        )
        parser.add_argument(
            "-N",
            "--Number_docs_in_coll",
            type=int,
            dest="collection",
            metavar="N",
            help="documents in the collection (utility's fourth weight)",
        )
        parser.add_argument(
            "-D", "--Debug_level", metavar="LEVEL", help="accepted; no debug output is printed"
        )
        parser.add_argument(
            "-R",
            "--Rel_info_format",
            default="qrels",
            dest="rel_format",
            metavar="FORMAT",
            help="qrels (the only one Assay reads)",
        )
        parser.add_argument(
            "-T",
            "--Results_format",
            default="trec_results",
            dest="results_format",
            metavar="FORMAT",
            help="trec_results (the only one trec_eval 10 reads)",
        )
        parser.add_argument(
            "-Z",
            "--Zscore",
            dest="zscores",
            metavar="FILE",
            help="print z-scores: each value against the file's 'qid measure mean stddev'",
        )
        parser.add_argument(
            "-o", "--Output_old_results_format", action="store_true", help="obsolete; ignored"
        )

    def handle(self, *args, **options):
        if options["rel_format"] not in ("qrels", "qrels_jg", "prefs", "qrels_prefs"):
            raise CommandError(
                f"rel_info format {options['rel_format']!r} is not offered; Assay reads "
                "qrels, qrels_jg, prefs and qrels_prefs"
            )
        if options["results_format"] != "trec_results":
            raise CommandError(
                f"Illegal retrieval results format {options['results_format']!r}; use trec_results"
            )
        columns = measure_columns_of(options["measures"])
        if options["rel_format"] == "qrels_jg":
            return self._groups(columns, options)
        if options["rel_format"] in ("prefs", "qrels_prefs"):
            return self._preferences(columns, options)
        wrong = [c.name for c in columns if c.special == "prefs"]
        if wrong:
            raise CommandError(
                f"{', '.join(wrong)}: preference measures need -R prefs or -R qrels_prefs"
            )
        zscores = read_zscores(options["zscores"]) if options["zscores"] else None
        joined = join_files(options["qrels"], options["run"])
        self.write_lines(
            trec_eval_lines(
                joined,
                columns,
                level=options["level"],
                complete=bool(options["complete"]),
                queries=bool(options["per_query"]),
                summary=not options["no_summary"],
                max_per_topic=options["max_per_topic"],
                judged_only=options["judged_only"],
                collection=options["collection"] or 0,
                zscores=zscores,
            )
        )

    def _preferences(self, columns, options):
        """``-R prefs`` / ``-R qrels_prefs``: the preference measures."""
        others = [
            c.name for c in columns if c.special != "prefs" and c.name not in ("runid", "num_q")
        ]
        if others:
            raise CommandError(
                f"with -R {options['rel_format']} trec_eval computes only runid, num_q and "
                f"the preference measures (all_prefs); not {', '.join(others)}"
            )
        if options["zscores"]:
            raise CommandError(f"-Z is not offered with -R {options['rel_format']}")
        prefs = join_preference_files(options["qrels"], options["run"], options["rel_format"])
        self.write_lines(
            preference_lines(
                prefs,
                columns,
                complete=bool(options["complete"]),
                queries=bool(options["per_query"]),
                summary=not options["no_summary"],
                max_per_topic=options["max_per_topic"],
            )
        )

    def _groups(self, columns, options):
        """``-R qrels_jg``: the measures averaged over each query's judgment groups."""
        others = [
            c.name
            for c in columns
            if not c.name.startswith(GROUP_MEASURES) and c.name not in ("runid", "num_q")
        ]
        if others:
            raise CommandError(
                f"with -R qrels_jg trec_eval computes only runid, num_q and "
                f"{', '.join(GROUP_MEASURES)}; not {', '.join(others)}"
            )
        if options["zscores"]:
            raise CommandError("-Z is not offered with -R qrels_jg")
        grouped = join_group_files(options["qrels"], options["run"])
        self.write_lines(
            group_lines(
                grouped,
                columns,
                level=options["level"],
                complete=bool(options["complete"]),
                queries=bool(options["per_query"]),
                summary=not options["no_summary"],
                max_per_topic=options["max_per_topic"],
                judged_only=options["judged_only"],
            )
        )
