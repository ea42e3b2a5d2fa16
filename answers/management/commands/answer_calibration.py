"""manage.py answer_calibration SLUG [--a SOURCES] [--b SOURCES] [--runs NAME ...] [--json]"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.sources import SourcesError
from answers.calibration import calibrate_answers


def _f(value, digits=3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


class Command(BaseCommand):
    help = (
        "An LLM judge's answer judgements against people's on the same answers: per aspect "
        "(nugget support, citation support) exact agreement, Cohen's kappa unweighted and "
        "linear, Krippendorff's alpha and the confusion matrix, with TREC 2024 RAG's "
        "reference figure beside citation support; and Kendall's tau between the run "
        "rankings on each side's scores. --json: the API's JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("--a", default="people", help="side A's label sources (people)")
        parser.add_argument(
            "--b", default=None, help="side B's label sources (default: the first judge)"
        )
        parser.add_argument("--runs", nargs="+", metavar="NAME", help="answer runs (default: all)")
        parser.add_argument("--json", action="store_true", help="JSON, as the API gives it")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        try:
            result = calibrate_answers(project, options["a"], options["b"], options["runs"])
        except SourcesError as error:
            raise CommandError(str(error)) from None
        if options["json"]:
            self.stdout.write(json.dumps(result.as_json(), ensure_ascii=False))
            return
        names = {"nugget": "Nugget support", "support": "Citation support"}
        self.stdout.write(f"{result.b} against {result.a}")
        self.stdout.write(
            "\t".join(
                ["aspect", "n", "exact", "kappa", "kappa_linear", "alpha_ordinal", "alpha_nominal"]
            )
        )
        for row in result.aspects:
            self.stdout.write(
                "\t".join(
                    [
                        names[row.aspect],
                        str(row.n),
                        _f(row.exact_agreement),
                        _f(row.kappa),
                        _f(row.kappa_linear),
                        _f(row.alpha_ordinal),
                        _f(row.alpha_nominal),
                    ]
                )
            )
            if row.reference:
                percent = round(100 * row.reference["exact_agreement"])
                self.stdout.write(
                    f"  reference: {percent} % exact agreement — {row.reference['source']}"
                )
            if row.n:
                self.stdout.write(f"  confusion (rows A, columns B; {', '.join(row.levels)}):")
                for level, cells in zip(row.levels, row.confusion, strict=True):
                    self.stdout.write(f"    {level:>8} " + " ".join(f"{c:>5}" for c in cells))
        self.stdout.write("run rankings (means over the answers both sides score):")
        for ranking in result.rankings:
            runs = ", ".join(f"{p.run} {_f(p.a)}/{_f(p.b)} ({p.answers})" for p in ranking.runs)
            self.stdout.write(
                f"  {ranking.measure}: Kendall's tau {_f(ranking.kendall_tau)} — {runs}"
            )
