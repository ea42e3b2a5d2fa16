"""Reading agreement label files: one line per label, ``annotator, item, grade[, query]``.

CSV or XLSX with that header, or JSONL with those keys. Bad lines (missing field,
grade not a whole number or outside the scale, an annotator grading an item twice, an
item under two queries) are reported together by line number.
"""

from __future__ import annotations

from pathlib import Path

from .errors import BadLine, FileRejected, LineErrors
from .files import check_file, detect_format
from .records import cell_text, not_whole, whole_number
from .rows import RowSource

FIELDS = ("annotator", "item", "grade")
AGREEMENT_FORMATS = ("csv", "jsonl", "xlsx")


def read_agreement_labels(
    path: Path | str, domain: list[int], fmt: str | None = None
) -> list[dict]:
    """Rows ``{line, annotator, item, grade, query}`` of a labels file on the ordered
    integer scale ``domain``; ``FileRejected`` names every bad line."""
    path = Path(path)
    fmt = detect_format(path, fmt, default="csv")
    if fmt not in AGREEMENT_FORMATS:
        raise FileRejected([f"labels cannot be read from {fmt}; use csv, jsonl or xlsx"])
    check_file(path)
    errors = LineErrors()
    rows = []
    for line, row in RowSource(path, fmt, required=FIELDS):
        if isinstance(row, BadLine):
            errors.add(line, row.message)
            continue
        missing = [k for k in FIELDS if row.get(k) is None or cell_text(row[k]) == ""]
        if missing:
            errors.add(line, f"missing {', '.join(missing)}")
            continue
        grade = whole_number(row["grade"])
        if grade is None:
            errors.add(line, not_whole("grade", row["grade"]))
            continue
        query = row.get("query")
        query = None if query is None or cell_text(query) == "" else cell_text(query)
        rows.append(
            {
                "line": line,
                "annotator": cell_text(row["annotator"]),
                "item": cell_text(row["item"]),
                "grade": grade,
                "query": query,
            }
        )
    check_labels(rows, domain, errors)
    if not rows and not errors:
        errors.add(0, "the file holds no labels")
    errors.raise_if_any()
    return rows


def check_labels(rows: list[dict], domain: list[int], errors: LineErrors) -> None:
    """Grades outside the domain, an annotator grading one item twice, an item under two
    queries: one problem per bad line."""
    allowed = set(domain)
    seen: dict[tuple, int] = {}
    query_of: dict[str, tuple] = {}
    for row in rows:
        line = row.get("line", 0)
        if row["grade"] not in allowed:
            errors.add(line, f"grade {row['grade']} is outside the domain")
        key = (row["annotator"], row["item"])
        if key in seen:
            errors.add(
                line, f"{row['annotator']} grades {row['item']} again (first on line {seen[key]})"
            )
        else:
            seen[key] = line
        earlier = query_of.setdefault(row["item"], (row["query"], line))
        if earlier[0] != row["query"]:
            errors.add(
                line,
                f"item {row['item']} has query {row['query']!r} here but "
                f"{earlier[0]!r} on line {earlier[1]}",
            )
