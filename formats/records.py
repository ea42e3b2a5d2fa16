"""What rows mean: cell values, retrieval results and judgments, each rule worded once.

Rows come from ``rows`` (any format); these generators turn them into typed records and
send every problem, by line, to a ``LineErrors``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from .errors import BadLine, LineErrors, Problem, define, gettext_noop
from .rows import Rows
from .values import id_problem

ITEM_COLUMNS = ("docid", "doc_id", "chunk_id", "item", "id")

NOT_WHOLE = define(
    "records.not_whole", gettext_noop("%(name)s must be a whole number, not %(value)s")
)
NOT_NUMBER = define("records.not_number", gettext_noop("%(name)s %(value)s is not a number"))
REPEATED = define(
    "records.repeated",
    gettext_noop("item %(item)s appears again for query %(qid)s (first on line %(first)s)"),
)
RUN_OBJECT = define(
    "records.run_object", gettext_noop('expected an object with "qid" and "retrieved"')
)
RETRIEVED_LIST = define("records.retrieved_list", gettext_noop('"retrieved" must be a list of ids'))
SCORES_LIST = define(
    "records.scores_list", gettext_noop('"scores" must be a list as long as "retrieved"')
)
QID_AND_ID = define(
    "records.qid_and_id", gettext_noop("each row needs a qid and an id (docid or chunk_id)")
)
SCORE_OR_RANK = define("records.score_or_rank", gettext_noop("each row needs a score or a rank"))
MISSING = define("records.missing", gettext_noop("missing %(what)s"))
MISSING_QID = define("records.missing_qid", gettext_noop("missing qid"))
GOLD_SHAPES = define(
    "records.gold_shapes", gettext_noop("gold_evidence must be a list and rel_map an object")
)
GRADE_OF = define("records.grade_of", gettext_noop("grade of %(item)s"))
MISSING_ITEM = define("records.missing_item", gettext_noop("missing item id (docid or chunk_id)"))
NO_LABELS = define("records.no_labels", gettext_noop("the file holds no labels"))
NO_RESULTS = define("records.no_results", gettext_noop("the file holds no results"))
CANNOT_READ_AS = define(
    "records.cannot_read_as",
    gettext_noop("%(what)s cannot be read from %(format)s; use %(formats)s"),
)
SPAN_ROW = define(
    "records.span_row", gettext_noop("each row needs qid, doc_id, %(columns)s and grade")
)
# At most 18 digits: a whole number fits the database's 64-bit integers (and int() is
# never asked to convert thousands of digits).
_WHOLE = re.compile(r"\s*[+-]?\d{1,18}\s*")


def cell_text(value) -> str:
    """A cell as an id or text: 12.0 → "12", strings stripped of outer space."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def first_id(row: dict, names: tuple[str, ...]) -> str | None:
    """The id under the first of ``names`` the row fills in, as text."""
    for name in names:
        value = row.get(name)
        if value not in (None, ""):
            return cell_text(value)
    return None


def whole_number(value) -> int | None:
    """An integer written as one (a JSON integer or a string of digits); else None.

    2.0 and true are not whole numbers here; a spreadsheet's whole-valued cells already
    arrive as integers (``rows``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _WHOLE.fullmatch(value):
        return int(value)
    return None


def number(value) -> float | None:
    """A number, or text that reads as one; else None (true is not a number)."""
    if isinstance(value, bool):
        return None
    try:
        result = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return result if math.isfinite(result) else None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(text):,} characters)"


def not_whole(name: str | Problem, value) -> Problem:
    return NOT_WHOLE(name=name, value=_shown(value))


def not_number(name: str, value) -> Problem:
    return NOT_NUMBER(name=name, value=_shown(value))


def bad_ids(line: int, errors: LineErrors, **ids: str) -> bool:
    """Whether any of the named ids cannot be an id (each problem reported)."""
    problems = [p for name, value in ids.items() if (p := id_problem(name, value))]
    for problem in problems:
        errors.add(line, problem)
    return bool(problems)


def repeated(qid: str, item: str, first: int) -> Problem:
    """The one wording of a (query, item) pair that a file gives twice."""
    return REPEATED(item=repr(item), qid=repr(qid), first=first)


def results(rows: Rows, fmt: str, errors: LineErrors) -> Iterator[tuple[int, str, str, float]]:
    """(line, qid, item id, score) of run rows: JSONL lines ``{"qid", "retrieved",
    "scores"?}`` (without scores the list order is the ranking), and TREC, CSV or XLSX
    rows with a qid, an id column and a score (or a rank: a lower rank scores higher)."""
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
        elif fmt == "jsonl":
            yield from _listed_results(line, row, errors)
        else:
            yield from _table_result(line, row, errors)


def _listed_results(line: int, row: dict, errors: LineErrors):
    if "qid" not in row or "retrieved" not in row:
        errors.add(line, RUN_OBJECT())
        return
    retrieved, scores = row["retrieved"], row.get("scores")
    if not isinstance(retrieved, list):
        errors.add(line, RETRIEVED_LIST())
        return
    if scores is None:
        scores = list(range(len(retrieved), 0, -1))
    if not isinstance(scores, list) or len(scores) != len(retrieved):
        errors.add(line, SCORES_LIST())
        return
    qid = cell_text(row["qid"])
    if bad_ids(line, errors, qid=qid):
        return
    for item, raw in zip(retrieved, scores, strict=True):
        score = number(raw)
        if bad_ids(line, errors, id=cell_text(item)):
            continue
        if score is None:
            errors.add(line, not_number("score", raw))
        else:
            yield line, qid, cell_text(item), score


def _table_result(line: int, row: dict, errors: LineErrors):
    item = first_id(row, ITEM_COLUMNS)
    if row.get("qid") in (None, "") or item is None:
        errors.add(line, QID_AND_ID())
        return
    if bad_ids(line, errors, qid=cell_text(row["qid"]), id=item):
        return
    if row.get("score") not in (None, ""):
        score = number(row["score"])
        if score is None:
            errors.add(line, not_number("score", row["score"]))
            return
    elif row.get("rank") not in (None, ""):
        rank = number(row["rank"])
        if rank is None:
            errors.add(line, not_number("rank", row["rank"]))
            return
        score = -rank
    else:
        errors.add(line, SCORE_OR_RANK())
        return
    yield line, cell_text(row["qid"]), item, score


def judgments(rows: Rows, errors: LineErrors) -> Iterator[tuple[int, str, str, int]]:
    """(line, qid, item id, grade) of qrels rows, CSV/XLSX rows (qid, an id column, grade)
    and JSONL gold lines ``{"qid", "gold_evidence": [...], "rel_map": {id: grade}}``
    (evidence without a rel_map grade counts 1)."""
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        qid = first_id(row, ("qid", "query_id"))
        if qid is None:
            errors.add(line, MISSING_QID())
            continue
        if bad_ids(line, errors, qid=qid):
            continue
        if "gold_evidence" in row or "rel_map" in row:
            rel_map = row.get("rel_map") or {}
            evidence = row.get("gold_evidence") or []
            if not isinstance(rel_map, dict) or not isinstance(evidence, list):
                errors.add(line, GOLD_SHAPES())
                continue
            grades = {cell_text(item): 1 for item in evidence}
            for item, raw in rel_map.items():
                grade = whole_number(raw)
                if grade is None:
                    errors.add(line, not_whole(GRADE_OF(item=repr(item)), raw))
                else:
                    grades[cell_text(item)] = grade
            for item, grade in grades.items():
                if not bad_ids(line, errors, id=item):
                    yield line, qid, item, grade
            continue
        item = first_id(row, ITEM_COLUMNS)
        if item is None:
            errors.add(line, MISSING_ITEM())
            continue
        if bad_ids(line, errors, id=item):
            continue
        raw = row.get("grade", row.get("relevance"))
        grade = whole_number(raw)
        if grade is None:
            errors.add(line, not_whole("grade", raw))
        else:
            yield line, qid, item, grade


SPAN_COLUMNS = {"passage": ("start", "end"), "page": ("page",)}


def span_judgments(
    rows: Rows, level: str, errors: LineErrors
) -> Iterator[tuple[int, str, str, tuple[int, ...], int]]:
    """(line, qid, doc_id, place, grade) of span labels: passage rows ``qid, doc_id,
    start, end, grade`` (place = (start, end)) or page rows ``qid, doc_id, page, grade``
    (place = (page,)), from JSONL, CSV or XLSX."""
    columns = SPAN_COLUMNS[level]
    for line, row in rows:
        if isinstance(row, BadLine):
            errors.add(line, row.problem)
            continue
        qid = first_id(row, ("qid", "query_id"))
        doc_id = first_id(row, ("doc_id", "docid"))
        if qid is None or doc_id is None:
            errors.add(line, SPAN_ROW(columns=", ".join(columns)))
            continue
        if bad_ids(line, errors, qid=qid, doc_id=doc_id):
            continue
        values = [whole_number(row.get(name)) for name in (*columns, "grade")]
        bad = [name for name, v in zip((*columns, "grade"), values, strict=True) if v is None]
        for name in bad:
            errors.add(line, not_whole(name, row.get(name)))
        if not bad:
            yield line, qid, doc_id, tuple(values[:-1]), values[-1]
