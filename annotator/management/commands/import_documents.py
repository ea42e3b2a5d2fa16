from annotator.importing.cli import ImportCommand


class Command(ImportCommand):
    help = "Import documents (JSONL, CSV or XLSX; optional pages) into a project."
    kind = "documents"
