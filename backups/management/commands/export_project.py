"""``manage.py export_project SLUG -o FILE.zip``: a whole project in one file."""

from django.core.management.base import BaseCommand

from annotator.cli import project_named
from backups.archive import export_project


class Command(BaseCommand):
    help = (
        "Export a project (documents, pages, chunkings, queries, memberships, every label "
        "with its history, adjudications, gold sets, runs) to a zip file."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("-o", "--output", required=True, help="the zip file to write")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        counts = export_project(project, options["output"])
        summary = ", ".join(f"{n} {label.split('.')[1]}" for label, n in counts.items() if n)
        self.stdout.write(f"{project.slug} → {options['output']}: {summary}")
