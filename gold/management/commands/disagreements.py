from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.sources import SourcesError
from gold.disagreements import DISAGREEMENT_RULES, disagreement_file, disagreements
from gold.units import check_level
from numerics.mapping import MappingPolicy


class Command(BaseCommand):
    help = (
        "Units on which annotators disagree after mapping their labels onto a level: one row "
        "per (query, unit) with each annotator's grade and the resolved grade, if any."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--level", required=True, help="documents, pages or a chunking")
        parser.add_argument(
            "--annotators", help="comma-separated usernames (default: the project's people)"
        )
        parser.add_argument(
            "--sources",
            help="whose labels are compared: people (default), assessors, judges, "
            "judge:<slug>[@<n>], comma-separated",
        )
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument(
            "--mapping", help="how labels reach units (default: the project's mapping setting)"
        )
        parser.add_argument("--rule", choices=sorted(DISAGREEMENT_RULES), default="any")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        try:
            check_level(project, options["level"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        try:
            mapping = MappingPolicy.parse(options["mapping"]) if options["mapping"] else None
        except ValueError as error:
            raise CommandError(str(error)) from None
        names = None
        if options["annotators"] is not None:
            names = [n.strip() for n in options["annotators"].split(",") if n.strip()]
        try:
            rows = disagreements(
                project,
                options["level"],
                mapping=mapping,
                annotators=names,
                rule=options["rule"],
                sources=options["sources"],
            )
        except SourcesError as error:
            raise CommandError(f"--sources: {error}") from None
        except ValueError as error:
            raise CommandError(f"--annotators: {error}") from None
        self.stdout.write(disagreement_file(rows, options["format"]), ending="")
