from django.core.management.base import CommandError

from annotator.importing.cli import ImportCommand


class Command(ImportCommand):
    help = (
        "Import existing labels attributed to a pseudo-annotator (or a new name): chunk or "
        "document labels as TREC qrels, JSONL gold lines, CSV or XLSX; passage rows "
        "(qid, doc_id, start, end, grade) or page rows (qid, doc_id, page, grade) as JSONL, "
        "CSV or XLSX."
    )
    kind = "labels"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--annotator", required=True, help="e.g. cranfield-assessors")
        parser.add_argument(
            "--level", required=True, choices=["chunk", "passage", "page", "document"]
        )
        parser.add_argument("--chunking", help="the chunking of chunk-level labels")

    def import_options(self, options) -> dict:
        if options["level"] == "chunk" and not options["chunking"]:
            raise CommandError("--level chunk needs --chunking NAME")
        return {
            "annotator": options["annotator"],
            "level": options["level"],
            "chunking": options["chunking"],
        }
