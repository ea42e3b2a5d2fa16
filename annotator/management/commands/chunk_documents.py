from django.core.management.base import BaseCommand, CommandError

from annotator.chunking import create_window_chunking
from annotator.cli import project_named
from formats import FileRejected


class Command(BaseCommand):
    help = (
        "Chunk every document of a project in windows of SIZE tokens overlapping by OVERLAP; "
        "--by-page keeps every chunk inside one page."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("--size", type=int, default=256)
        parser.add_argument("--overlap", type=int, default=32)
        parser.add_argument("--by-page", action="store_true", help="never cross a page break")
        parser.add_argument("--name", help="the chunking's name (default tokens-SIZE-OVERLAP)")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        try:
            result = create_window_chunking(
                project,
                size=options["size"],
                overlap=options["overlap"],
                by_page=options["by_page"],
                name=options["name"],
            )
        except (ValueError, FileRejected) as error:
            message = "\n".join(error.errors) if isinstance(error, FileRejected) else str(error)
            raise CommandError(message) from None
        self.stdout.write(f"{project.slug}: {result.created} chunks in {result.detail}")
