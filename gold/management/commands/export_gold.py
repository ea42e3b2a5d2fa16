import json

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Max

from annotator.cli import project_named
from gold.export import FORMATS, build_export, render_export
from gold.models import GoldSet
from gold.units import check_level
from numerics.mapping import MappingPolicy


class Command(BaseCommand):
    help = "Export a frozen gold set at a level (documents, pages or a chunking)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("name", help="the gold set's name")
        parser.add_argument("--gold-version", type=int, help="default: the latest version")
        parser.add_argument("--level", default="documents", help="documents, pages or a chunking")
        parser.add_argument("--format", choices=sorted(FORMATS), default="jsonl")
        parser.add_argument(
            "--mapping",
            help="contains | any_overlap | evidence_overlap>=θ | chunk_overlap>=θ "
            "(default: the one the gold set was frozen with)",
        )
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        sets = GoldSet.objects.filter(project=project, name=options["name"])
        version = options["gold_version"] or sets.aggregate(v=Max("version"))["v"]
        gold_set = sets.filter(version=version).first()
        if gold_set is None:
            raise CommandError(f"no gold set {options['name']!r} version {version}")
        try:
            check_level(project, options["level"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        try:
            mapping = MappingPolicy.parse(options["mapping"]) if options["mapping"] else None
        except ValueError as error:
            raise CommandError(str(error)) from None
        export = build_export(gold_set, options["level"], mapping)
        # Every export states its policy: JSONL lines and the Excel "about" sheet carry it;
        # qrels has no room for it, so it goes to standard error for every format.
        self.stderr.write("policy: " + json.dumps(export.policy, ensure_ascii=False))
        data = render_export(export, options["format"])
        if options["output"]:
            with open(options["output"], "wb") as handle:
                handle.write(data)
        elif options["format"] == "xlsx":
            raise CommandError("an Excel export needs --output FILE")
        else:
            self.stdout.write(data.decode("utf-8"), ending="")
