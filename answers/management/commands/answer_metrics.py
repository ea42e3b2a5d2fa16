"""manage.py answer_metrics SLUG [--runs NAME ...] [--sources TOKENS] [--json]: the answer
runs' measures on the judgements of the label sources chosen (people by default);
with --baseline NAME, the runs compared with it (as ``manage.py compare`` and the API's
``answers/compare/``)."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from annotator.sources import SourcesError
from answers.api_views import metrics_json
from answers.comparison import chosen_measures, compare_answer_runs, comparison_json
from answers.metrics import MEASURES, answer_sources
from answers.models import AnswerRun
from metrics.run_comparison import RANDOMIZATION, T_TEST
from web.errors import BadParameters


class Command(BaseCommand):
    help = (
        "Print each answer run's measures (the mean over the answers where each is "
        "defined, and how many those are), as the answer dashboard and the API give them; "
        "--json: the API's JSON, with every answer's values. With --baseline: every other "
        "run against the baseline (paired randomization and t-tests, Holm's correction "
        "per measure), as on the answer comparison page and the API's answers/compare/."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--runs", nargs="+", default=[], help="answer run names (default: all)")
        parser.add_argument("--json", action="store_true", help="JSON, one object per run")
        parser.add_argument(
            "--sources",
            default="",
            help="whose judgements count, comma-separated: people, assessors, judges, "
            "judge:<slug>, judge:<slug>@<n> (default: people)",
        )
        parser.add_argument("--baseline", help="compare the runs with this answer run (by name)")
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            default=[],
            metavar="MEASURE",
            help=f"with --baseline: the measures compared (default all: {' '.join(MEASURES)})",
        )
        parser.add_argument(
            "--alpha", type=float, default=0.05, help="significance level after Holm's correction"
        )

    def handle(self, *args, slug, runs, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project {slug!r}")
        chosen = AnswerRun.objects.filter(project=project).select_related("chunking")
        named = [*runs, *([options["baseline"]] if options["baseline"] else [])]
        missing = sorted(
            set(named) - set(chosen.filter(name__in=named).values_list("name", flat=True))
        )
        if missing:
            raise CommandError(f"no answer run {', '.join(map(repr, missing))} in {slug!r}")
        try:
            options["sources"] = answer_sources(project, options["sources"])
        except SourcesError as error:
            raise CommandError(str(error)) from None
        if options["baseline"]:
            return self.compare(chosen, runs, options)
        if options["measures"]:
            raise CommandError("--measure chooses the measures compared: give --baseline")
        chosen = chosen.filter(name__in=runs) if runs else chosen.active()
        results = [metrics_json(run, options["sources"]) for run in chosen]
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {"sources": options["sources"].names, "answer_runs": results},
                    ensure_ascii=False,
                    indent=1,
                )
            )
            return
        self.stdout.write("\t".join(["run", "answers", *MEASURES]))
        for result in results:
            cells = [result["answer_run"]["name"], str(result["answer_run"]["answers"])]
            for name in MEASURES:
                m = result["measures"][name]
                cells.append("-" if m["mean"] is None else f"{m['mean']:.4f} ({m['answers']})")
            self.stdout.write("\t".join(cells))
        self.stdout.write(f"sources: {options['sources'].text}")

    def compare(self, chosen, runs: list[str], options) -> None:
        """The runs (all active ones when none is named) against the baseline."""
        by_name = {run.name: run for run in chosen}
        names = runs or [run.name for run in chosen.active()]
        ordered = [by_name[options["baseline"]]] + [
            by_name[n] for n in dict.fromkeys(names) if n != options["baseline"]
        ]
        if len(ordered) < 2:
            raise CommandError("compare at least one run with the baseline")
        if not 0 < options["alpha"] < 1:
            raise CommandError("--alpha must be between 0 and 1")
        try:
            measures = chosen_measures(options["measures"])
        except BadParameters as error:
            raise CommandError(str(error)) from None
        comparison = compare_answer_runs(
            ordered, measures, alpha=options["alpha"], sources=options["sources"]
        )
        result = comparison_json(comparison)
        if options["json"]:
            self.stdout.write(json.dumps(result, ensure_ascii=False, indent=1))
            return
        self.stdout.write(
            "\t".join(["measure", "queries", "run", "mean", "delta", "w/t/l", "p_rand", "p_holm"])
        )
        for name, measure in result["measures"].items():
            self.stdout.write(
                f"{name}\t{measure['queries']}\t{result['baseline']['name']} (baseline)\t"
                f"{measure['baseline_mean']:.4f}"
            )
            for row in measure["runs"]:
                marks = (RANDOMIZATION if row["significant"] else "") + (
                    T_TEST if row["significant_t"] else ""
                )
                self.stdout.write(
                    "\t".join(
                        [
                            name,
                            str(measure["queries"]),
                            row["name"],
                            f"{row['mean']:.4f}{marks}",
                            f"{row['delta']:+.4f}",
                            f"{row['wins']}/{row['ties']}/{row['losses']}",
                            _p(row["p_randomization"]),
                            _p(row["p_holm"]),
                        ]
                    )
                )
        self.stdout.write(
            f"{RANDOMIZATION} paired randomization test, {T_TEST} paired t-test: different "
            f"from the baseline at p < {result['alpha']} after Holm's correction "
            f"({result['queries']} queries answered by every run; sources: "
            f"{','.join(result['sources'])})"
        )


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.4g}"
