"""``manage.py import_project FILE.zip [--slug NEW]``: a project back from its export."""

from django.core.management.base import BaseCommand, CommandError

from backups.archive import import_project
from formats import FileRejected


class Command(BaseCommand):
    help = "Import a project exported by export_project, all or nothing, as a new project."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--slug", help="the new project's slug (default: the exported one)")

    def handle(self, *args, **options):
        try:
            project = import_project(options["file"], slug=options["slug"])
        except FileRejected as failure:
            raise CommandError("\n".join(failure.errors)) from None
        self.stdout.write(f"imported {project.slug} ({project.name})")
