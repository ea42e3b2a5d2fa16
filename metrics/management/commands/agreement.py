"""`manage.py agreement LABELS`: agreement coefficients of a labels file, no database.

LABELS is CSV or XLSX (header ``annotator,item,grade`` and optionally ``query``) or JSONL
with the same keys; the format comes from the extension unless ``--format`` says
otherwise. ``--domain`` is the ordered integer grade scale (default 0,1,2,3). The file is
read and checked by ``formats.read_agreement_labels`` (every bad line reported by
number); the report comes from ``numerics.agreement.report``, the builder the web
agreement page uses too.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from formats import FileRejected, read_agreement_labels
from numerics.agreement import Report, report_of_rows


def parse_domain(text: str) -> list[int]:
    try:
        domain = [int(v) for v in text.split(",")]
    except ValueError:
        raise CommandError("--domain is a comma-separated list of integers") from None
    if len(set(domain)) != len(domain) or len(domain) < 2:
        raise CommandError("--domain needs at least two distinct integers")
    if domain != sorted(domain):
        raise CommandError("--domain lists the scale in increasing order")
    return domain


class Command(BaseCommand):
    help = (
        "Agreement of a labels file (CSV or XLSX with header annotator,item,grade[,query] "
        "or JSONL with the same keys): percent agreement, Cohen, Fleiss, Krippendorff. No database."
    )
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("labels", help="CSV, XLSX or JSONL file of labels")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--domain", default="0,1,2,3", help="the ordered grade scale")
        parser.add_argument(
            "--format", choices=["csv", "jsonl", "xlsx"], help="override the extension"
        )

    def handle(self, *args, **options):
        domain = parse_domain(options["domain"])
        try:
            rows = read_agreement_labels(options["labels"], domain, options["format"])
        except FileRejected as failure:
            raise CommandError(str(failure)) from None
        report = report_of_rows(rows, domain)
        if options["json"]:
            self.stdout.write(json.dumps(report.as_json(), ensure_ascii=False))
            return
        self._text(report)

    def _text(self, report: Report) -> None:
        def show(value):
            return "not defined" if value is None else f"{value:.4f}"

        out = self.stdout.write
        items2 = report.support["items_with_two_labels"]
        pairable = report.support["pairable_values"]
        summary = report.summary
        out(f"items {summary['n_items']}, annotators {summary['n_annotators']}")
        out(
            f"percent agreement            {show(summary['percent_agreement'])} "
            f"(n={items2} items with ≥ 2 labels)"
        )
        fleiss = summary["fleiss_kappa"]
        out(
            f"Fleiss' kappa                {show(fleiss['value'])} "
            f"(n={fleiss['n_items']} items with m={fleiss['m']} labels)"
        )
        for level, value in summary["krippendorff_alpha"].items():
            out(
                f"Krippendorff's alpha {level:<8}{show(value)} "
                f"(n={pairable} pairable labels on {items2} items)"
            )
        for pair in summary["pairs"]:
            out(
                f"{pair['a']} × {pair['b']} (n={pair['n']}): kappa {show(pair['cohen_kappa'])}, "
                f"linear {show(pair['cohen_kappa_linear'])}, "
                f"quadratic {show(pair['cohen_kappa_quadratic'])}"
            )
        for row in report.per_query:
            alpha = row["krippendorff_alpha"]
            out(
                f"query {row['query']} (n={row['n_items']} items with ≥ 2 labels): "
                f"alpha nominal {show(alpha['nominal'])}, ordinal {show(alpha['ordinal'])}, "
                f"interval {show(alpha['interval'])}; "
                f"percent agreement {show(row['percent_agreement'])}"
            )
