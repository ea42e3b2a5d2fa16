from annotator.importing.cli import ImportCommand, parse_params


class Command(ImportCommand):
    help = "Import a chunking: chunks with start/end offsets or with their text."
    kind = "chunks"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--chunking", required=True, help="name of the new chunking")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="parameters to record (size, overlap, unit ...)",
        )

    def import_options(self, options) -> dict:
        return {"chunking": options["chunking"], "parameters": parse_params(options["param"])}
