"""manage.py export_run SLUG RUN [--format trec|jsonl]: a run at its own level, ranked."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from gold.units import units_for_level
from metrics.evaluation import own_level
from metrics.models import Run
from metrics.trec_lines import unit_run_lines


class Command(BaseCommand):
    help = (
        "Write a run (by name or id) as a TREC run or JSONL lines at its own level, in "
        "trec_eval's ranking: the file the run page downloads."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("run", help="the run's name or id")
        parser.add_argument("--format", choices=["trec", "jsonl"], default="trec")

    def handle(self, *args, slug, run, format, **options):
        project = project_named(slug)
        runs = Run.objects.filter(project=project).select_related("chunking").without_results()
        found = runs.filter(name=run).first()
        if found is None and run.isascii() and run.isdigit() and len(run) < 16:
            found = runs.filter(pk=int(run)).first()
        if found is None:
            raise CommandError(f"no run {run!r} in {slug}")
        units = units_for_level(project, own_level(found))
        for line in unit_run_lines(found, units, format):
            self.stdout.write(line)
