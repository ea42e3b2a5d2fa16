"""manage.py import_answers SLUG FILE --name NAME [--chunking NAME] [--param key=value …]"""

from annotator.importing.cli import ImportCommand, parse_params


class Command(ImportCommand):
    help = (
        "Import an answer run (TREC RAG 2024/2025 JSONL or the simple JSONL): all or "
        "nothing, every bad line named, every citation resolved to a span."
    )
    kind = "answers"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--name", required=True, help="the answer run's name")
        parser.add_argument(
            "--chunking", default="", help="the chunking whose chunk ids the file cites"
        )
        parser.add_argument("--param", action="append", default=[], help="key=value")
        parser.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")

    def import_options(self, options) -> dict:
        return {
            "name": options["name"],
            "chunking": options["chunking"],
            "parameters": parse_params(options["param"]),
            "tags": [t.strip() for t in options["tag"] if t.strip()],
        }
