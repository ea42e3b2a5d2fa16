"""`manage.py agreement LABELS`: agreement coefficients of a labels file, no database.

LABELS is CSV (header ``annotator,item,grade`` and optionally ``query``) or JSONL with the
same keys; the format comes from the extension unless ``--format`` says otherwise.
``--domain`` is the ordered integer grade scale (default 0,1,2,3). Bad lines (missing
field, non-integer grade, grade outside the domain, an annotator grading an item twice, an
item given two queries) are reported together by line number, up to MAX_ERRORS of them.

``read_labels_file`` and ``check_rows`` parse and validate; the report comes from
``numerics.agreement.report``, the builder the web agreement page uses too.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from numerics.agreement import Report, report_of_rows

MAX_ERRORS = 20
FIELDS = ("annotator", "item", "grade")

Error = tuple[int, str]  # (line number, 0 for the whole file; message)


def _format(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt
    return "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson", ".json") else "csv"


def _raw_rows(path: Path, fmt: str) -> tuple[list[tuple[int, dict]], list[Error]]:
    rows: list[tuple[int, dict]] = []
    errors: list[Error] = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        if fmt == "csv":
            reader = csv.DictReader(handle)
            missing = [f for f in FIELDS if f not in (reader.fieldnames or [])]
            if missing:
                return [], [(1, f"the header lacks {', '.join(missing)}")]
            for row in reader:
                rows.append((reader.line_num, row))
            return rows, errors
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as error:
                errors.append((number, f"malformed JSON ({error.msg})"))
                continue
            if not isinstance(row, dict):
                errors.append((number, "expected a JSON object"))
                continue
            rows.append((number, row))
    return rows, errors


def _grade(value) -> int:
    """A whole number written as such: a JSON integer or a string of digits (not 2.0)."""
    if isinstance(value, bool | float):
        raise ValueError
    return int(str(value).strip())


def read_labels_file(path: Path, fmt: str | None = None) -> tuple[list[dict], list[Error]]:
    """Rows {line, annotator, item, grade, query} of a labels file, and the (line, message)
    errors of the lines that could not be read (missing field, non-integer grade)."""
    try:
        raw_rows, errors = _raw_rows(path, _format(path, fmt))
    except UnicodeDecodeError:
        return [], [(0, "the file is not UTF-8 text")]
    parsed = []
    for number, row in raw_rows:
        missing = [k for k in FIELDS if row.get(k) is None or str(row.get(k)).strip() == ""]
        if missing:
            errors.append((number, f"missing {', '.join(missing)}"))
            continue
        try:
            grade = _grade(row["grade"])
        except ValueError:
            errors.append((number, f"grade {row['grade']!r} is not a whole number"))
            continue
        query = row.get("query")
        parsed.append(
            {
                "line": number,
                "annotator": str(row["annotator"]).strip(),
                "item": str(row["item"]).strip(),
                "grade": grade,
                "query": None if query is None or str(query).strip() == "" else str(query).strip(),
            }
        )
    return parsed, errors


def check_rows(rows: list[dict], domain: list[int]) -> list[Error]:
    """Grades outside the domain, an annotator grading one item twice, an item under two
    queries: one (line, message) per bad line."""
    errors: list[Error] = []
    allowed = set(domain)
    seen: dict[tuple, int] = {}
    query_of: dict[str, tuple] = {}
    for row in rows:
        line = row.get("line", 0)
        if row["grade"] not in allowed:
            errors.append((line, f"grade {row['grade']} is outside the domain"))
        key = (row["annotator"], row["item"])
        if key in seen:
            errors.append(
                (line, f"{row['annotator']} grades {row['item']} again (first on line {seen[key]})")
            )
        else:
            seen[key] = line
        earlier = query_of.setdefault(row["item"], (row["query"], line))
        if earlier[0] != row["query"]:
            errors.append(
                (
                    line,
                    f"item {row['item']} has query {row['query']!r} here but "
                    f"{earlier[0]!r} on line {earlier[1]}",
                )
            )
    return errors


def _raise(errors: list[Error]) -> None:
    errors = sorted(errors, key=lambda e: e[0])
    lines = [f"line {n}: {message}" if n else message for n, message in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        lines.append(f"… and {len(errors) - MAX_ERRORS} more")
    raise CommandError("\n".join(lines))


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
        "Agreement of a labels file (CSV with header annotator,item,grade[,query] or JSONL "
        "with the same keys): percent agreement, Cohen, Fleiss, Krippendorff. No database."
    )
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("labels", help="CSV or JSONL file of labels")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument("--domain", default="0,1,2,3", help="the ordered grade scale")
        parser.add_argument("--format", choices=["csv", "jsonl"], help="override the extension")

    def handle(self, *args, **options):
        domain = parse_domain(options["domain"])
        path = Path(options["labels"])
        if not path.is_file():
            raise CommandError(f"no such file: {path}")
        rows, errors = read_labels_file(path, options["format"])
        errors += check_rows(rows, domain)
        if errors:
            _raise(errors)
        if not rows:
            raise CommandError("the file holds no labels")
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
