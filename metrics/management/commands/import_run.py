from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.importing.cli import parse_params
from annotator.models import Chunking
from formats import FileRejected
from metrics.run_import import FORMATS, import_run


class Command(BaseCommand):
    help = "Import a retrieval run (TREC, JSONL, CSV or XLSX) into a project."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--name", required=True, help="run name, unique in the project")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--chunking", help="the chunking whose chunk ids the run returns")
        target.add_argument("--documents", action="store_true", help="the run returns doc ids")
        parser.add_argument(
            "--param",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="configuration to record (chunk size, model, k ...)",
        )
        parser.add_argument("--format", choices=FORMATS)
        parser.add_argument(
            "--keep-known",
            action="store_true",
            help="drop lines with unknown query or item ids instead of failing",
        )
        parser.add_argument("--replace", action="store_true", help="replace a run of that name")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        chunking = None
        if options["chunking"]:
            chunking = Chunking.objects.filter(project=project, name=options["chunking"]).first()
            if chunking is None:
                raise CommandError(f"no chunking {options['chunking']!r} in {project.slug}")
        try:
            run = import_run(
                project,
                options["file"],
                name=options["name"],
                chunking=chunking,
                parameters=parse_params(options["param"]),
                format=options["format"],
                keep_known=options["keep_known"],
                replace=options["replace"],
            )
        except FileRejected as failure:
            raise CommandError("nothing imported:\n" + str(failure)) from None
        dropped = f", {run.n_dropped} results dropped (unknown ids)" if run.n_dropped else ""
        self.stdout.write(
            f"{run.name}: {run.n_results} results for {run.n_queries} queries{dropped}"
        )
