"""``import_files SLUG PATH… [--recursive] [--include GLOB…] [--exclude GLOB…] [--skip-bad]``."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.importing.files import Selection, import_files, sources_from_paths
from formats import FileRejected
from formats.documents.extract import ReadOptions

# The exit status when some files were set aside (``--skip-bad``) and the rest imported.
SOME_SKIPPED = 2


class Command(BaseCommand):
    help = (
        "Import document files (PDF, DOCX, HTML, Markdown, text, or .zip / .gz of them) into "
        "a project, all or nothing (or with --skip-bad, the good ones); each file becomes a "
        "document named by its path."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("paths", nargs="+", help="files, .zip archives or folders")
        parser.add_argument("--recursive", action="store_true", help="folders: all levels")
        parser.add_argument(
            "--include",
            nargs="+",
            default=[],
            metavar="GLOB",
            help="folders: take only files whose path (or name) matches one of these, "
            "whatever their type",
        )
        parser.add_argument(
            "--exclude",
            nargs="+",
            default=[],
            metavar="GLOB",
            help="folders: leave out files whose path (or name) matches one of these",
        )
        parser.add_argument(
            "--skip-bad",
            action="store_true",
            help="import the good files and list each bad one with its reason "
            f"(exit status {SOME_SKIPPED} when some were skipped)",
        )
        parser.add_argument(
            "--replace",
            action="store_true",
            help="replace documents whose file changed (never while labels or chunks are on them)",
        )
        parser.add_argument(
            "--html-whole-page",
            action="store_true",
            help="HTML: keep the whole page (menus, headers, footers), not only its main content",
        )
        parser.add_argument(
            "--docx-headers",
            action="store_true",
            help="Word: add the pages' headers and footers after the body",
        )

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        paths = [Path(p) for p in options["paths"]]
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise CommandError(
                "nothing imported:\n" + "\n".join(f"{m}: no such file" for m in missing)
            )
        selection = Selection(
            recursive=options["recursive"],
            include=tuple(options["include"]),
            exclude=tuple(options["exclude"]),
        )
        reading = ReadOptions(
            html_whole_page=options["html_whole_page"], docx_headers=options["docx_headers"]
        )
        try:
            result = import_files(
                project,
                sources_from_paths(paths, selection),
                replace=options["replace"],
                skip_bad=options["skip_bad"],
                options=reading,
            )
        except FileRejected as failure:
            raise CommandError("nothing imported:\n" + "\n".join(failure.errors)) from None
        for line in result.report:
            if line.outcome == "skipped":
                for problem in line.problems:
                    self.stdout.write(f"skipped {problem}")
            elif line.outcome == "passed over":
                self.stdout.write(f"not a document, passed over: {line.name}")
        if result.detail:
            self.stdout.write(f"{project.slug}: {result.detail}")
        self.stdout.write(f"{result.created} imported, {result.skipped} skipped")
        if result.skipped:
            sys.exit(SOME_SKIPPED)
