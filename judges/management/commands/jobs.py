"""``manage.py jobs SLUG [--json]``: the project's judging jobs and imports, what each is
doing (state, progress, pairs or rows done and left, failures by reason, calls and budget
used, started, updated, worker)."""

import json

from django.core.management.base import BaseCommand

from annotator.cli import project_named
from judges.status import project_jobs


class Command(BaseCommand):
    help = "List a project's judging jobs and imports with their state and progress"

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument(
            "--json",
            action="store_true",
            help="one JSON document, with every failed pair's reason and raw reply",
        )

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        states = project_jobs(project, failed_pairs=options["json"])
        if options["json"]:
            body = {"project": project.slug, "jobs": [s.as_json() for s in states]}
            self.stdout.write(json.dumps(body, ensure_ascii=False, indent=2))
            return
        if not states:
            self.stdout.write(f"no jobs in {project.slug}")
            return
        for s in states:
            parts = [f"{s.kind} {s.id}", s.what, s.state, f"{s.percent}%"]
            if s.left is not None:
                parts.append(f"done {s.done}, left {s.left}")
            if s.calls is not None:
                parts.append(f"calls {s.calls}/{s.budget}")
            parts += [
                f"started {s.started or '-'}",
                f"updated {s.updated or '-'}",
                f"worker {s.worker or '-'}",
            ]
            self.stdout.write("  ".join(parts))
            if s.failures:
                parts = ", ".join(f"{reason} {n}" for reason, n in s.failures.items())
                self.stdout.write(f"  failures: {parts}")
            if s.takeovers:
                self.stdout.write(f"  taken over {s.takeovers}× from a worker that stopped")
            if s.reason:
                self.stdout.write(f"  reason: {s.reason}")
