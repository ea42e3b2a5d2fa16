"""manage.py export_nuggets SLUG: the live nuggets or a gold set's, as JSONL, CSV, XLSX or
ndeval's subtopic qrels."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Max

from annotator.cli import project_named
from gold.models import GoldSet
from gold.units import check_level
from nuggets.exporting import FORMATS, build_nugget_export, render
from numerics.mapping import MappingPolicy


class Command(BaseCommand):
    help = (
        "Export a project's nuggets (or a frozen gold set's with --gold NAME): JSONL, CSV, "
        "XLSX, or ndeval qrels 'qid nugget_id unit_id rel' at --level (default documents)."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--gold", metavar="NAME", help="a frozen gold set's name")
        parser.add_argument("--gold-version", type=int, help="default: the latest version")
        parser.add_argument("--format", choices=FORMATS, default="jsonl")
        parser.add_argument(
            "--level",
            help="documents, pages or a chunking: add each nugget's covering units "
            "(JSONL 'units'); ndeval's level (default documents)",
        )
        parser.add_argument(
            "--mapping",
            help="contains | any_overlap | evidence_overlap>=θ | chunk_overlap>=θ "
            "(default: the gold set's, else the project's)",
        )
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        gold_set = None
        if options["gold"]:
            sets = GoldSet.objects.filter(project=project, name=options["gold"])
            version = options["gold_version"] or sets.aggregate(v=Max("version"))["v"]
            gold_set = sets.filter(version=version).first()
            if gold_set is None:
                raise CommandError(f"no gold set {options['gold']!r} version {version}")
        level = options["level"] or ("documents" if options["format"] == "ndeval" else None)
        try:
            if level is not None:
                check_level(project, level)
            mapping = MappingPolicy.parse(options["mapping"]) if options["mapping"] else None
        except ValueError as error:
            raise CommandError(str(error)) from None
        export = build_nugget_export(project, gold_set=gold_set, level=level, mapping=mapping)
        data = render(export, options["format"])
        if export.policy:
            self.stderr.write(f"level: {export.level}; mapping: {export.policy}")
        if options["output"]:
            with open(options["output"], "wb") as handle:
                handle.write(data)
        elif options["format"] == "xlsx":
            raise CommandError("an Excel export needs --output FILE")
        else:
            sys.stdout.flush()
            self.stdout.write(data.decode("utf-8"), ending="")
