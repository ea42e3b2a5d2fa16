"""What the import commands share: find the project, run the import, report; key=value."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from formats import FORMATS, FileRejected

from . import run_import


def parse_params(pairs: list[str]) -> dict:
    """``--param key=value`` options as a dict of the configuration to record."""
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"--param needs key=value, not {pair!r}")
        params[key] = value
    return params


class ImportCommand(BaseCommand):
    kind = ""

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("file")
        parser.add_argument("--format", choices=FORMATS, help="override the file extension")

    def import_options(self, options) -> dict:
        return {}

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        try:
            result = run_import(
                self.kind,
                project,
                options["file"],
                format=options["format"],
                options=self.import_options(options),
            )
        except FileRejected as failure:
            raise CommandError("nothing imported:\n" + "\n".join(failure.errors)) from None
        detail = f" ({result.detail})" if result.detail else ""
        self.stdout.write(f"{project.slug}: {result.created} {self.kind} imported{detail}")
