from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.importing.files import import_files, sources_from_paths
from formats import FileRejected


class Command(BaseCommand):
    help = (
        "Import document files (PDF, DOCX, HTML, Markdown, text, or .zip of them) into a "
        "project, all or nothing; each file becomes a document named by its file name."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("paths", nargs="+", help="files, .zip archives or folders")
        parser.add_argument("--recursive", action="store_true", help="folders: all levels")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace documents whose file changed (only when no labels are on them)",
        )

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        paths = [Path(p) for p in options["paths"]]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(
                "nothing imported:\n" + "\n".join(f"{m}: no such file" for m in missing)
            )
        sources = sources_from_paths(paths, recursive=options["recursive"])
        try:
            result = import_files(project, sources, replace=options["replace"])
        except FileRejected as failure:
            raise CommandError("nothing imported:\n" + "\n".join(failure.errors)) from None
        detail = f" ({result.detail})" if result.detail else ""
        self.stdout.write(f"{project.slug}: {result.created} documents imported{detail}")
