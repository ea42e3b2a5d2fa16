from annotator.importing.cli import ImportCommand


class Command(ImportCommand):
    help = "Import queries (JSONL, CSV or XLSX) into a project."
    kind = "queries"
