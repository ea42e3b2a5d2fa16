"""Reading which units cover which nuggets, for ``evaluate --nuggets`` on files.

Two layouts, both written by ``export_nuggets`` at a level:

- JSONL, one nugget a line, with its covering units: ``{"qid", "nugget_id",
  "importance": "vital"|"okay", "units": [ids], …}`` — every nugget, covered or not;
- ndeval's subtopic qrels, ``qid subtopic docid rel`` (any other extension): a line per
  covering (nugget, unit) pair with rel ≥ 1 (rel 2 marks a vital nugget); lines with rel
  0 name a nugget without making the unit cover it. Only nuggets that appear are known.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import LineErrors, define, gettext_noop
from .files import check_file, detect_format, open_text
from .records import MISSING, first_id, whole_number
from .rows import RowSource

NDEVAL_COLUMNS = define(
    "nugget_file.ndeval_columns",
    gettext_noop("expected 4 columns 'qid subtopic docid rel', found %(n)s"),
)
REL_NUMBER = define(
    "nugget_file.rel_number", gettext_noop("rel must be a whole number, not %(value)s")
)
UNITS_LIST = define("nugget_file.units_list", gettext_noop('"units" must be a list of unit ids'))
NUGGET_TWICE = define(
    "nugget_file.nugget_twice",
    gettext_noop("nugget %(nugget)s of query %(qid)s appears again (line %(line)s)"),
)
NO_NUGGETS = define("nugget_file.no_nuggets", gettext_noop("the file holds no nuggets"))


@dataclass(frozen=True)
class NuggetFile:
    """Nuggets by query and the units covering them, ids as text.

    ``nuggets``: (qid, nugget id, vital) in file order; ``pairs``: (nugget index, unit id)."""

    nuggets: list[tuple[str, str, bool]]
    pairs: list[tuple[int, str]]


def read_nugget_file(path: Path | str, fmt: str | None = None) -> NuggetFile:
    """Read either layout; every bad line is reported (``FileRejected``)."""
    path = Path(path)
    check_file(path)
    errors = LineErrors()
    if detect_format(path, fmt, default="qrels") == "jsonl":
        found = _jsonl(path, errors)
    else:
        found = _ndeval(path, errors)
    if not found.nuggets and not errors:
        errors.add(0, NO_NUGGETS())
    errors.raise_if_any(source=path.name)
    return found


def _jsonl(path: Path, errors: LineErrors) -> NuggetFile:
    nuggets: list[tuple[str, str, bool]] = []
    pairs: list[tuple[int, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in RowSource(path, "jsonl"):
        if not isinstance(row, dict):
            errors.add(line, row.problem)
            continue
        qid, nugget = first_id(row, ("qid",)), first_id(row, ("nugget_id", "id"))
        if qid is None or nugget is None:
            errors.add(line, MISSING(what="qid" if qid is None else "nugget_id"))
            continue
        units = row.get("units", [])
        if not isinstance(units, list) or not all(isinstance(u, str | int) for u in units):
            errors.add(line, UNITS_LIST())
            continue
        if (qid, nugget) in seen:
            twice = NUGGET_TWICE(nugget=repr(nugget), qid=repr(qid), line=seen[(qid, nugget)])
            errors.add(line, twice)
            continue
        seen[(qid, nugget)] = line
        nuggets.append((qid, nugget, str(row.get("importance", "")).strip() == "vital"))
        pairs += [(len(nuggets) - 1, str(u)) for u in units]
    return NuggetFile(nuggets, pairs)


def _ndeval(path: Path, errors: LineErrors) -> NuggetFile:
    index: dict[tuple[str, str], int] = {}
    vital: dict[int, bool] = {}
    pairs: list[tuple[int, str]] = []
    with open_text(path) as handle:
        for line, text in enumerate(handle, start=1):
            fields = text.split()
            if not fields:
                continue
            if len(fields) != 4:
                errors.add(line, NDEVAL_COLUMNS(n=len(fields)))
                continue
            qid, nugget, unit, rel_text = fields
            rel = whole_number(rel_text)
            if rel is None:
                errors.add(line, REL_NUMBER(value=repr(rel_text)))
                continue
            position = index.setdefault((qid, nugget), len(index))
            vital[position] = vital.get(position, False) or rel >= 2
            if rel >= 1:
                pairs.append((position, unit))
    nuggets = [(qid, nugget, vital[i]) for (qid, nugget), i in index.items()]
    return NuggetFile(nuggets, pairs)


def nugget_arrays(found: NuggetFile, qids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(query index into ``qids``, vital) per nugget; ``qids`` must hold every qid."""
    position = {qid: i for i, qid in enumerate(qids)}
    query = np.array([position[q] for q, _n, _v in found.nuggets], dtype=np.int64)
    vital = np.array([v for _q, _n, v in found.nuggets], dtype=bool)
    return query, vital
