"""Run and qrels files as arrays, fast, with every bad line named.

Formats (see the README): TREC run ``qid Q0 docid rank score tag``, TREC qrels
``qid iteration docid grade``, TSV ``qid docid score`` (BEIR's qrels, with their
header), JSONL runs ``{"qid", "retrieved": [...], "scores": [...]}``, JSONL gold lines
``{"qid", "gold_evidence": [...], "rel_map": {id: grade}}``, BEIR-style JSON
``{qid: {docid: score}}``, and CSV or XLSX tables of the same columns. TREC-style files
are read by the one TREC reader (``trec``, a block at a time); the others row by row
through ``rows`` and ``records``, so every format obeys the same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .blocks import is_stdin
from .columnar import read_trec_run
from .errors import FileRejected, LineErrors, define, gettext_noop
from .files import check_file, detect_format
from .ids import as_bytes, factorize
from .json_maps import id_maps
from .records import CANNOT_READ_AS, NO_LABELS, NO_RESULTS, judgments, repeated, results
from .rows import RowSource
from .trec import NOT_FINITE, read_blocks

RUN_FORMATS = ("trec", "tsv", "jsonl", "json", "csv", "xlsx")
A_RUN = define("arrays.a_run", gettext_noop("a run"))
QRELS_FORMATS = ("qrels", "tsv", "jsonl", "json", "csv", "xlsx")
# The TREC reader's layout of each TREC-style format, for runs and for qrels.
RUN_LAYOUTS = {"trec": "trec", "tsv": "tsv_run"}
QRELS_LAYOUTS = {"qrels": "qrels", "tsv": "tsv_qrels"}
PROGRESS_EVERY = 1000
Progress = Callable[[float], None] | None


@dataclass(frozen=True)
class Ranked:
    """Rows of a run: query ``qids[query[i]]`` retrieved ``items[item[i]]`` with ``score[i]``
    on line ``line[i]``, in file order.

    ``qids`` and ``items`` are the sorted distinct ids (UTF-8 bytes), so code order is
    id order. ``tag`` is the run tag of a TREC file's last line (trec_eval's ``runid``),
    else the file name without its extension."""

    qids: np.ndarray
    items: np.ndarray
    query: np.ndarray
    item: np.ndarray
    score: np.ndarray
    line: np.ndarray
    tag: str = ""


@dataclass(frozen=True)
class Qrels:
    """Rows of qrels: query ``qids[query[i]]`` judged ``items[item[i]]`` with ``grade[i]``."""

    qids: np.ndarray
    items: np.ndarray
    query: np.ndarray
    item: np.ndarray
    grade: np.ndarray
    line: np.ndarray


def read_run(
    path: Path | str,
    fmt: str | None = None,
    *,
    errors: LineErrors | None = None,
    max_bytes: int | None = None,
    progress: Progress = None,
) -> Ranked:
    """A run file as arrays. Bad lines (and a repeated item within a query) raise
    ``FileRejected``; given ``errors``, they are added there and left out instead, so the
    caller can report them with its own checks."""
    path = Path(path)
    try:
        fmt = run_format(path, fmt)
        if not is_stdin(path):
            check_file(path, max_bytes)
        collected = LineErrors() if errors is None else errors
        tag = path.name.split(".")[0]
        if fmt in RUN_LAYOUTS:
            frame = read_trec_run(path, RUN_LAYOUTS[fmt], errors=collected, max_bytes=max_bytes)
            qid = frame.qids[frame.query]
            item = as_bytes(frame.ids.to_list())
            score, tag = frame.score, frame.tag or tag
            line = frame.lines(np.arange(frame.query.size))
        elif fmt == "json":
            found = list(id_maps(path, "score", collected, max_bytes=max_bytes))
            qid, item = as_bytes([r[1] for r in found]), as_bytes([r[2] for r in found])
            score = np.array([r[3] for r in found], dtype=np.float64)
            line = np.array([r[0] for r in found], dtype=np.int64)
        else:
            source = RowSource(path, fmt, max_bytes=max_bytes)
            found = list(results(_reporting(source, progress), fmt, collected))
            qid, item = as_bytes([r[1] for r in found]), as_bytes([r[2] for r in found])
            score = np.array([r[3] for r in found], dtype=np.float64)
            line = np.array([r[0] for r in found], dtype=np.int64)
        finite = np.isfinite(score)
        if not finite.all():
            bad = np.flatnonzero(~finite)
            collected.add_each(line[bad], lambda i: NOT_FINITE(value=str(float(score[bad[i]]))))
            qid, item, score, line = qid[finite], item[finite], score[finite], line[finite]
        qids, query = factorize(qid)
        items, item_code = factorize(item)
        keep = _first_of_each_pair(qids, items, query, item_code, line, collected)
        if not line.size and not collected:
            collected.add(0, NO_RESULTS())
        if errors is None:
            collected.raise_if_any()
    except FileRejected as rejected:
        rejected.source = rejected.source or path.name
        raise
    if progress is not None:
        progress(1.0)
    return Ranked(qids, items, query[keep], item_code[keep], score[keep], line[keep], tag)


def read_qrels(
    path: Path | str,
    fmt: str | None = None,
    *,
    errors: LineErrors | None = None,
    max_bytes: int | None = None,
) -> Qrels:
    """A qrels file (TREC, JSONL gold lines, CSV or XLSX) as arrays; a repeated
    (qid, item) is a bad line. ``errors`` as for ``read_run``."""
    path = Path(path)
    try:
        fmt = _format(path, fmt, QRELS_FORMATS, "qrels", "qrels")
        if not is_stdin(path):
            check_file(path, max_bytes)
        collected = LineErrors() if errors is None else errors
        if fmt in QRELS_LAYOUTS:
            parts = list(read_blocks(path, QRELS_LAYOUTS[fmt], collected, max_bytes=max_bytes))
            qid = as_bytes([q for part in parts for q in part.qid.to_list()])
            item = as_bytes([i for part in parts for i in part.item.to_list()])
            grade = np.concatenate([p.value for p in parts] or [np.zeros(0, np.int64)])
            line = np.concatenate([p.line for p in parts] or [np.zeros(0, np.int64)])
        elif fmt == "json":
            found = list(id_maps(path, "grade", collected, max_bytes=max_bytes))
            qid, item = as_bytes([r[1] for r in found]), as_bytes([r[2] for r in found])
            grade = np.array([r[3] for r in found], dtype=np.int64)
            line = np.array([r[0] for r in found], dtype=np.int64)
        else:
            found = list(judgments(RowSource(path, fmt, max_bytes=max_bytes), collected))
            qid, item = as_bytes([r[1] for r in found]), as_bytes([r[2] for r in found])
            grade = np.array([r[3] for r in found], dtype=np.int64)
            line = np.array([r[0] for r in found], dtype=np.int64)
        qids, query = factorize(qid)
        items, item_code = factorize(item)
        keep = _first_of_each_pair(qids, items, query, item_code, line, collected)
        if not line.size and not collected:
            collected.add(0, NO_LABELS())
        if errors is None:
            collected.raise_if_any()
    except FileRejected as rejected:
        rejected.source = rejected.source or path.name
        raise
    return Qrels(qids, items, query[keep], item_code[keep], grade[keep], line[keep])


def run_format(path: Path | str, fmt: str | None = None) -> str:
    """The format a run file is read in (its content decides; ``fmt`` overrides)."""
    return _format(Path(path), fmt, RUN_FORMATS, "trec", A_RUN())


def _format(path: Path, fmt: str | None, allowed: tuple[str, ...], default: str, what: str):
    fmt = detect_format(path, fmt, default=default, allowed=allowed)
    if fmt not in allowed:
        raise FileRejected([CANNOT_READ_AS(what=what, format=fmt, formats=", ".join(allowed))])
    return fmt


def _reporting(source: RowSource, progress: Progress) -> Iterator:
    """The source's rows, telling ``progress`` how far through the file they are."""
    if progress is None:
        yield from source
        return
    for count, numbered in enumerate(source, start=1):
        if count % PROGRESS_EVERY == 0:
            progress(source.fraction())
        yield numbered


def _first_of_each_pair(qids, items, query, item, line, errors: LineErrors) -> np.ndarray:
    """Which rows to keep: a repeated (query, item) pair is a bad line naming the first."""
    keep = np.ones(query.size, dtype=bool)
    if query.size < 2:
        return keep
    key = query * max(items.size, 1) + item
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if not same.size:
        return keep
    again = order[same + 1]
    # The first line of each repeated pair: walk back to the start of its group.
    group_start = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    first = order[group_start[np.searchsorted(group_start, same + 1, side="right") - 1]]
    keep[again] = False
    by_line = np.argsort(line[again], kind="stable")
    again, first = again[by_line], first[by_line]
    errors.add_each(
        line[again],
        lambda i: repeated(
            qids[query[again[i]]].decode(), items[item[again[i]]].decode(), int(line[first[i]])
        ),
    )
    return keep
