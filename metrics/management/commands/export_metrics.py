"""manage.py export_metrics SLUG [--level ...] [--gold ...]: the dashboard's metrics table."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.sources import SourcesError, resolve_sources
from gold.units import check_level
from metrics.access import MAX_ID
from metrics.evaluation import (
    OWN,
    EvaluationSetting,
    check_measures,
    default_level,
    evaluation_setting,
)
from metrics.export_tables import export_tables
from metrics.models import Run
from metrics.tables import metrics_export
from numerics.mapping import MappingPolicy
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
        try:
            setting = _setting(project, options)
        except (ValueError, SourcesError) as error:
            raise CommandError(str(error)) from None
        run = None
        if options["run"]:
            run = _run(project, options["run"])
        exported = metrics_export(setting, run=run)
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


def _setting(project, options) -> EvaluationSetting:
    """The evaluation setting the options name (an operator's: every gold set, the live
    labels by default); ``ValueError`` or ``SourcesError`` naming a bad option."""
    level = options["level"] or default_level(project)
    if level != OWN:
        check_level(project, level)
    gold_set = None
    if options["gold"] not in ("", "live"):
        if not (options["gold"].isascii() and options["gold"].isdigit()):
            raise ValueError("--gold: live or a gold set's id")
        gold_set = project.gold_sets.filter(pk=int(options["gold"])).first()
        if gold_set is None:
            raise ValueError(f"no gold set {options['gold']} in {project.slug}")
    if not (options["k"].isascii() and options["k"].isdigit() and 1 <= int(options["k"]) <= 1000):
        raise ValueError("--k: a whole number from 1 to 1000")
    k = int(options["k"])
    mapping = MappingPolicy.parse(options["mapping"]) if options["mapping"] else None
    return evaluation_setting(
        project,
        level=level,
        k=k,
        gold_set=gold_set,
        mapping=mapping,
        measures=check_measures([m.strip() for m in options["measure"] if m.strip()], k) or None,
        sources=resolve_sources(project, options["sources"]),
    )


def _run(project, text: str) -> Run:
    run = None
    if text.isascii() and text.isdigit() and 0 < int(text) <= MAX_ID:
        run = Run.objects.without_results().filter(project=project, pk=int(text)).first()
    if run is None:
        raise CommandError(f"no run {text!r} in {project.slug}")
    return run
