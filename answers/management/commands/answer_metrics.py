"""manage.py answer_metrics SLUG [--runs NAME ...] [--json]: the answer runs' measures."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotator.models import Project
from answers.api_views import metrics_json
from answers.metrics import MEASURES
from answers.models import AnswerRun


class Command(BaseCommand):
    help = (
        "Print each answer run's measures (the mean over the answers where each is "
        "defined, and how many those are), as the answer dashboard and the API give them; "
        "--json: the API's JSON, with every answer's values."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--runs", nargs="+", default=[], help="answer run names (default: all)")
        parser.add_argument("--json", action="store_true", help="JSON, one object per run")

    def handle(self, *args, slug, runs, **options):
        project = Project.objects.filter(slug=slug).first()
        if project is None:
            raise CommandError(f"no project {slug!r}")
        chosen = AnswerRun.objects.filter(project=project).select_related("chunking")
        if runs:
            missing = sorted(
                set(runs) - set(chosen.filter(name__in=runs).values_list("name", flat=True))
            )
            if missing:
                raise CommandError(f"no answer run {', '.join(map(repr, missing))} in {slug!r}")
            chosen = chosen.filter(name__in=runs)
        else:
            chosen = chosen.active()
        results = [metrics_json(run) for run in chosen]
        if options["json"]:
            self.stdout.write(json.dumps({"answer_runs": results}, ensure_ascii=False, indent=1))
            return
        self.stdout.write("\t".join(["run", "answers", *MEASURES]))
        for result in results:
            cells = [result["answer_run"]["name"], str(result["answer_run"]["answers"])]
            for name in MEASURES:
                m = result["measures"][name]
                cells.append("-" if m["mean"] is None else f"{m['mean']:.4f} ({m['answers']})")
            self.stdout.write("\t".join(cells))
