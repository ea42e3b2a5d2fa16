import json

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from gold.services import ConsensusPolicy, freeze_gold_set
from numerics.consensus import RULES
from numerics.mapping import MappingPolicy


class Command(BaseCommand):
    help = (
        "Freeze a new version of a gold set from chosen annotators: people only by default, "
        "pseudo-annotators (imported assessors, LLM judges) only when named."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", required=True, help="the gold set's name")
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--annotators", help="comma-separated usernames whose labels count")
        who.add_argument(
            "--sources",
            help="whose labels count: people, assessors, judges, judge:<slug>[@<n>], "
            "comma-separated (default: people)",
        )
        who.add_argument(
            "--humans-only",
            action="store_true",
            help="the people who labelled, no pseudo-annotators (the default)",
        )
        parser.add_argument("--rule", choices=RULES, default="majority")
        parser.add_argument("--min-annotators", type=int, default=1)
        parser.add_argument("--no-adjudicated-first", action="store_true")
        parser.add_argument(
            "--mapping", help="how labels reach units (default: the project's mapping setting)"
        )
        parser.add_argument("--note", default="")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        names = None
        if options["annotators"] is not None:
            names = [n.strip() for n in options["annotators"].split(",") if n.strip()]
            if not names:
                raise CommandError("--annotators needs at least one name")
        try:
            policy = ConsensusPolicy(
                options["rule"], options["min_annotators"], not options["no_adjudicated_first"]
            )
            mapping = MappingPolicy.parse(options["mapping"]) if options["mapping"] else None
            gold_set = freeze_gold_set(
                project,
                options["name"],
                policy=policy,
                annotators=names,
                mapping=mapping,
                sources=options["sources"],
                note=options["note"],
            )
        except ValueError as error:  # SelectionError and SourcesError too
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"{project.slug}: {gold_set.name} v{gold_set.version}: {gold_set.n_queries} queries, "
            f"{gold_set.n_labels} labels"
        )
        self.stdout.write("policy: " + json.dumps(gold_set.policy, ensure_ascii=False))
