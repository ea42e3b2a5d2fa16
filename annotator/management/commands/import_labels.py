from django.core.management.base import CommandError

from annotator.importing.cli import ImportCommand


class Command(ImportCommand):
    help = (
        "Import existing labels (TREC qrels or JSONL gold lines) attributed to a named "
        "pseudo-annotator."
    )
    kind = "labels"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--annotator", required=True, help="e.g. cranfield-assessors")
        parser.add_argument("--level", required=True, choices=["chunk", "document"])
        parser.add_argument("--chunking", help="the chunking of chunk-level labels")

    def import_options(self, options) -> dict:
        if options["level"] == "chunk" and not options["chunking"]:
            raise CommandError("--level chunk needs --chunking NAME")
        return {
            "annotator": options["annotator"],
            "level": options["level"],
            "chunking": options["chunking"],
        }
