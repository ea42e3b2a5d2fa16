"""manage.py export_metrics SLUG [--level ...] [--gold ...]: the dashboard's metrics table."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.http import QueryDict

from annotator.cli import project_named
from annotator.models import Membership, Role
from annotator.sources import SourcesError
from metrics.export_tables import export_tables
from metrics.forms import MetricsExportForm
from metrics.tables import metrics_export
from web.spreadsheets import csv_text, xlsx_bytes


class Command(BaseCommand):
    help = (
        "Write the metrics table the dashboard downloads (means with interval bounds per "
        "run, or with --run the per-query values) as CSV on stdout or XLSX to --output."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--level", default="", help="own, documents, pages or a chunking")
        parser.add_argument("--gold", default="live", help="live or a gold set's id")
        parser.add_argument("--k", default="10")
        parser.add_argument("--mapping", default="")
        parser.add_argument(
            "--sources",
            default="",
            help="whose live labels count: people, assessors, judges, judge:<slug>[@<n>], "
            "comma-separated (default people,assessors)",
        )
        parser.add_argument("--measure", action="append", default=[], help="repeatable")
        parser.add_argument("--run", default="", help="a run's id: per-query values")
        parser.add_argument(
            "--table",
            default="",
            help="another table instead of the runs' metrics: answers (each answer run's "
            "measures, on --sources, default people); XLSX exports carry every such table "
            "as a sheet",
        )
        parser.add_argument("--format", choices=["csv", "xlsx"], default="csv")
        parser.add_argument("--output", help="file to write (required for xlsx)")

    def handle(self, *args, slug, **options):
        project = project_named(slug)
        # The command reads as the project's owner would: every gold set, the live labels.
        owner = Membership.objects.filter(project=project, role=Role.OWNER).first()
        if owner is None:
            raise CommandError(f"project {slug!r} has no owner")
        tables = export_tables()
        if options["table"]:
            if options["table"] not in tables:
                raise CommandError(
                    f"no table {options['table']!r}; use one of {', '.join(sorted(tables))}"
                )
            build = tables[options["table"]]
            try:
                table = build(project, sources=options["sources"] or None)
            except SourcesError as error:
                raise CommandError(str(error)) from None
            self._write({options["table"]: table}, options)
            return
        data = QueryDict(mutable=True)
        for key in ("level", "gold", "k", "mapping", "run", "format", "sources"):
            if options[key]:
                data[key] = options[key]
        data.setlist("measure", options["measure"])
        form = MetricsExportForm(data, membership=owner, remembered=False)
        if not form.is_valid():
            errors = "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
            raise CommandError(errors)
        exported = metrics_export(form)
        if exported is None:
            raise CommandError("this run cannot be evaluated at that level")
        sheets = {"metrics": (exported.header, exported.table)}
        if options["format"] == "xlsx":
            sheets = exported.sheets()  # the table, then the about sheet: sources, policy
            chosen = options["sources"] or None  # the answers' default: people
            sheets.update({name: build(project, sources=chosen) for name, build in tables.items()})
        self._write(sheets, options)

    def _write(self, sheets: dict, options) -> None:
        """XLSX: every sheet; CSV: the first."""
        if options["format"] == "xlsx":
            if not options["output"]:
                raise CommandError("--format xlsx needs --output FILE")
            with open(options["output"], "wb") as handle:
                handle.write(xlsx_bytes(sheets))
            return
        header, table = next(iter(sheets.values()))
        text = csv_text(header, table)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        else:
            self.stdout.write(text, ending="")
