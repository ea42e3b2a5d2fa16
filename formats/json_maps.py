"""BEIR-style JSON files: one object mapping each query id to ``{item id: value}``.

BEIR writes its retrieval results this way (``{"q1": {"d7": 12.5, …}}``) and pytrec_eval
takes qrels and runs in the same shape. The whole file is one JSON document, so problems
are named by query and item rather than by line (each is reported on line 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from .errors import LineErrors, define, gettext_noop
from .files import check_file, open_text
from .records import bad_ids, not_number, not_whole, number, whole_number
from .rows import BAD_JSON, JSON_REFUSED, JsonRefused, load_json

NOT_A_MAP = define(
    "json_maps.not_a_map", gettext_noop("expected one JSON object {query id: {id: value}}")
)
NOT_A_QUERY_MAP = define(
    "json_maps.not_a_query_map",
    gettext_noop("the value of query %(qid)s must be an object {id: value}"),
)


def id_maps(
    path: Path | str, value: str, errors: LineErrors, *, max_bytes: int | None = None
) -> Iterator[tuple[int, str, str, float | int]]:
    """(1, qid, item id, value) for every pair of the file; ``value`` is "score" (any
    finite number) or "grade" (a whole number). Problems go to ``errors``."""
    path = Path(path)
    check_file(path, max_bytes)
    with open_text(path) as handle:
        text = handle.read()
    try:
        document = load_json(text)
    except json.JSONDecodeError as error:
        errors.add(1, BAD_JSON(error=error.msg, column=error.colno))
        return
    except JsonRefused as refused:
        errors.add(1, JSON_REFUSED(reason=refused.problem))
        return
    if not isinstance(document, dict):
        errors.add(1, NOT_A_MAP())
        return
    for qid, items in document.items():
        if not isinstance(items, dict):
            errors.add(1, NOT_A_QUERY_MAP(qid=repr(qid)))
            continue
        if bad_ids(1, errors, qid=qid):
            continue
        for item, raw in items.items():
            if bad_ids(1, errors, id=item):
                continue
            read = number(raw) if value == "score" else whole_number(raw)
            if read is None:
                shown = f"{value} of {item!r}"
                errors.add(1, not_number(shown, raw) if value == "score" else not_whole(shown, raw))
                continue
            yield 1, qid, item, read
