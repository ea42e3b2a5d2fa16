"""manage.py import_nuggets SLUG FILE: nuggets from JSONL, CSV or XLSX, all or nothing."""

from annotator.importing.cli import ImportCommand


class Command(ImportCommand):
    help = (
        "Import nuggets (JSONL, CSV or XLSX: qid, nugget_id, text, importance vital|okay, "
        "evidence as doc_id/start/end) into a project; nothing is written if a line is bad."
    )
    kind = "nuggets"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--author", help="the lead (owner or adjudicator) who wrote them, by username"
        )

    def import_options(self, options) -> dict:
        return {"author": options["author"]} if options["author"] else {}
