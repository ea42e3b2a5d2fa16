"""Reading agreement label files: one line per label, ``annotator, item, grade[, query]``.

CSV or XLSX with that header, or JSONL with those keys. Bad lines (missing field,
grade not a whole number or outside the scale, an annotator grading an item twice, an
item under two queries) are reported together by line number.
"""

from __future__ import annotations

from pathlib import Path

from .errors import BadLine, FileRejected, LineErrors, define, gettext_noop
from .files import check_file, detect_format
from .records import CANNOT_READ_AS, MISSING, NO_LABELS, cell_text, not_whole, whole_number
from .rows import RowSource

FIELDS = ("annotator", "item", "grade")
AGREEMENT_FORMATS = ("csv", "jsonl", "xlsx")

LABELS = define("agreement.labels", gettext_noop("a labels file"))
OUTSIDE = define("agreement.outside", gettext_noop("grade %(grade)s is outside the domain"))
AGAIN = define(
    "agreement.again", gettext_noop("%(annotator)s grades %(item)s again (first on line %(first)s)")
)
TWO_QUERIES = define(
    "agreement.two_queries",
    gettext_noop("item %(item)s has query %(query)s here but %(earlier)s on line %(line)s"),
)


def read_agreement_labels(
    path: Path | str, domain: list[int], fmt: str | None = None
) -> list[dict]:
    """Rows ``{line, annotator, item, grade, query}`` of a labels file on the ordered
    integer scale ``domain``; ``FileRejected`` names every bad line."""
    path = Path(path)
    fmt = detect_format(path, fmt, default="csv")
    if fmt not in AGREEMENT_FORMATS:
        formats = ", ".join(AGREEMENT_FORMATS)
        raise FileRejected([CANNOT_READ_AS(what=LABELS(), format=fmt, formats=formats)])
    check_file(path)
    errors = LineErrors()
    rows = []
    for line, row in RowSource(path, fmt, required=FIELDS):
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        missing = [k for k in FIELDS if row.get(k) is None or cell_text(row[k]) == ""]
        if missing:
            errors.add(line, MISSING(what=", ".join(missing)))
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
        errors.add(0, NO_LABELS())
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
            errors.add(line, OUTSIDE(grade=row["grade"]))
        key = (row["annotator"], row["item"])
        if key in seen:
            errors.add(line, AGAIN(annotator=row["annotator"], item=row["item"], first=seen[key]))
        else:
            seen[key] = line
        earlier = query_of.setdefault(row["item"], (row["query"], line))
        if earlier[0] != row["query"]:
            errors.add(
                line,
                TWO_QUERIES(
                    item=row["item"],
                    query=repr(row["query"]),
                    earlier=repr(earlier[0]),
                    line=earlier[1],
                ),
            )
