"""Reading run and qrels files into arrays, fast, with every bad line named.

Formats (see the README): TREC run ``qid Q0 docid rank score tag``, TREC qrels
``qid iteration docid grade``, JSONL runs ``{"qid", "retrieved": [...], "scores": [...]}``
and JSONL gold lines ``{"qid", "gold_evidence": [...], "rel_map": {id: grade}}``.

TREC files take a vectorised path: the whole file is split into tokens once and the
columns are sliced out as byte-string arrays. Only when the token count does not fit the
column count is the file re-read line by line to name the bad lines. Ids stay UTF-8 bytes
so that sorting them gives trec_eval's ``strcmp`` order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_ERRORS = 50


class FileFormatError(ValueError):
    """A run or qrels file with bad lines; ``errors`` holds ``line N: reason`` messages."""

    def __init__(self, path: Path | str, errors: list[str]):
        self.path = str(path)
        self.errors = errors
        super().__init__(f"{Path(path).name}:\n" + "\n".join(errors))


@dataclass(frozen=True)
class Ranked:
    """Rows of a run: query ``qids[query[i]]`` retrieved ``items[item[i]]`` with ``score[i]``.

    ``qids`` and ``items`` are the sorted distinct ids (UTF-8 bytes), so code order is
    id order."""

    qids: np.ndarray
    items: np.ndarray
    query: np.ndarray
    item: np.ndarray
    score: np.ndarray
    line: np.ndarray


@dataclass(frozen=True)
class Judged:
    """Rows of qrels: query ``qids[query[i]]`` judged ``items[item[i]]`` with ``grade[i]``."""

    qids: np.ndarray
    items: np.ndarray
    query: np.ndarray
    item: np.ndarray
    grade: np.ndarray
    line: np.ndarray


def _factorize(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ids and each row's code into them.

    Ids of up to 32 bytes are compared as up to four big-endian 64-bit words (zero
    padding keeps byte order: a prefix sorts first, as with ``strcmp``), which sorts
    much faster than byte strings; longer ids take numpy's string sort."""
    if ids.size == 0:
        return ids, np.zeros(0, dtype=np.int64)
    width = ids.dtype.itemsize
    used = np.flatnonzero(
        np.ascontiguousarray(ids).view(np.uint8).reshape(ids.size, width).any(axis=0)
    )
    if used.size and used[-1] + 1 < width:  # drop padding no id uses (sorts fewer words)
        width = int(used[-1]) + 1
        ids = ids.astype(f"S{width}")
    if width > 32:
        distinct, codes = np.unique(ids, return_inverse=True)
        return distinct, codes.astype(np.int64)
    words = -(-width // 8)
    padded = np.zeros(ids.size, dtype=f"S{words * 8}")
    padded[:] = ids
    columns = padded.view(">u8").reshape(ids.size, words).astype(np.uint64)
    # Query ids come in long runs of the same value: factorise one row per run.
    change = np.r_[True, np.any(columns[1:] != columns[:-1], axis=1)]
    if 4 * np.count_nonzero(change) < ids.size:
        heads = np.flatnonzero(change)
        distinct, head_codes = _factorize(ids[heads])
        return distinct, np.repeat(head_codes, np.diff(np.r_[heads, ids.size]))
    order = np.argsort(columns[:, 0]) if words == 1 else np.lexsort(columns.T[::-1])
    ordered = columns[order]
    new = np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)]
    codes = np.empty(ids.size, dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ids[order[new]], codes


def file_format(path: Path | str, explicit: str | None = None) -> str:
    if explicit:
        return explicit
    return "jsonl" if Path(path).suffix.lower() in (".jsonl", ".json", ".ndjson") else "trec"


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise FileFormatError(
            path, [f"not UTF-8 text (bad byte at offset {error.start})"]
        ) from None
    return data


def _tokens_per_line(data: bytes) -> np.ndarray:
    """Number of whitespace-separated tokens on each ``\n``-terminated line (numpy).

    Bytes ≤ 32 (space, tab, CR, LF and other controls) separate tokens; a token starts
    where a separator is followed by anything else. The count per line is the difference
    of the number of token starts before each line end.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.size == 0:
        return np.zeros(0, dtype=np.int64)
    separator = raw <= 32
    starts = ~separator
    starts[1:] &= separator[:-1]
    token_starts = np.flatnonzero(starts)
    line_ends = np.flatnonzero(raw == 10)
    if line_ends.size == 0 or line_ends[-1] != raw.size - 1:
        line_ends = np.r_[line_ends, raw.size]
    return np.diff(np.r_[0, np.searchsorted(token_starts, line_ends)]).astype(np.int64)


def _parsed_columns(
    path: Path, data: bytes, kinds: list[str]
) -> tuple[list[np.ndarray | None], np.ndarray] | None:
    """Columns of a regular file through numpy's C reader (``np.loadtxt``), or None.

    ``kinds`` gives each column's type: "id" (bytes, kept whole), "float", or "skip"
    (read but unused; None in the result). Text is read as Latin-1, which maps every
    byte to one character and back, so UTF-8 ids come out as their exact bytes.
    Fixed-width id columns that might have been cut are read again wider. Anything
    irregular — a bad line, a blank line (line numbers would shift), a byte-order mark —
    returns None and the caller takes the checked path, which names every bad line.
    """
    if not data or data.startswith(b"\xef\xbb\xbf"):
        return None
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    width = 32
    while width <= 512:
        dtype = [
            (f"c{i}", {"id": f"S{width}", "float": "f8", "skip": "S1"}[kind])
            for i, kind in enumerate(kinds)
        ]
        try:
            table = np.loadtxt(path, dtype=dtype, comments=None, encoding="latin-1", ndmin=1)
        except ValueError:
            return None
        if table.size != n_lines:
            return None
        columns = [
            None if kind == "skip" else np.ascontiguousarray(table[f"c{i}"])
            for i, kind in enumerate(kinds)
        ]
        del table
        if not any(_may_be_cut(c, width) for c, k in zip(columns, kinds, strict=True) if k == "id"):
            return columns, np.arange(1, n_lines + 1)
        width *= 4
    return None


def _may_be_cut(column: np.ndarray, width: int) -> bool:
    """Whether a fixed-width bytes column has a value filling its whole width."""
    if column.size == 0:
        return False
    last_bytes = column.view(np.uint8).reshape(column.size, width)[:, -1]
    return bool(last_bytes.any())


def _columns(path: Path, data: bytes, width: int, what: str) -> tuple[list[np.ndarray], np.ndarray]:
    """Split a whitespace-separated file into ``width`` columns (vectorised fast path)."""
    counts = _tokens_per_line(data)
    bad = np.flatnonzero((counts != width) & (counts != 0))
    if bad.size:
        errors = [
            f"line {n + 1}: expected {width} columns '{what}', found {counts[n]}"
            for n in bad[:MAX_ERRORS]
        ]
        if bad.size > MAX_ERRORS:
            errors.append(f"… and {bad.size - MAX_ERRORS} more bad lines")
        raise FileFormatError(path, errors)
    tokens = np.array(data.split(), dtype=np.bytes_)
    line = np.flatnonzero(counts) + 1
    return [tokens[c::width] for c in range(width)], line


def _numbers(path: Path, column: np.ndarray, line: np.ndarray, kind: str) -> np.ndarray:
    try:
        return column.astype(np.float64) if kind == "score" else column.astype(np.int64)
    except ValueError:
        errors = []
        for value, number in zip(column, line, strict=True):
            try:
                float(value) if kind == "score" else int(value)
            except ValueError:
                text = value.decode(errors="replace")
                errors.append(f"line {number}: {kind} {text!r} is not a number")
                if len(errors) >= MAX_ERRORS:
                    break
        raise FileFormatError(path, errors) from None


def _check_duplicates(path: Path, qids, items, query, item, line, what: str) -> None:
    """A repeated (query, item) pair is an error naming both lines."""
    if query.size < 2:
        return
    key = query * max(items.size, 1) + item
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if same.size:
        raise FileFormatError(
            path,
            [
                f"line {line[order[k + 1]]}: {what} {items[item[order[k]]].decode()!r} appears "
                f"again for query {qids[query[order[k]]].decode()!r} "
                f"(first on line {line[order[k]]})"
                for k in same[:MAX_ERRORS]
            ],
        )


def _jsonl_rows(path: Path, data: bytes, keys: tuple[str, ...]):
    errors: list[str] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as error:
            errors.append(f"line {number}: malformed JSON ({error.msg})")
            continue
        if not isinstance(row, dict) or "qid" not in row or not any(k in row for k in keys):
            errors.append(f'line {number}: expected an object with "qid" and {keys[0]!r}')
            continue
        yield number, row, errors
    if errors:
        raise FileFormatError(path, errors[:MAX_ERRORS])


def read_run(path: Path | str, fmt: str | None = None) -> Ranked:
    """A run file as arrays; duplicate items within a query are errors naming the line."""
    path = Path(path)
    data = _read_bytes(path)
    if file_format(path, fmt) == "trec":
        parsed = _parsed_columns(path, data, ["id", "skip", "id", "skip", "float", "skip"])
        if parsed is not None:
            (qid, _q0, item, _rank, score, _tag), line = parsed
        else:
            (qid, _q0, item, _rank, score, _tag), line = _columns(
                path, data, 6, "qid Q0 docid rank score tag"
            )
        score = _numbers(path, score, line, "score")
    else:
        qids, items, scores, lines = [], [], [], []
        errors: list[str] = []
        for number, row, errors in _jsonl_rows(path, data, ("retrieved",)):
            retrieved = row.get("retrieved")
            values = row.get("scores")
            if values is None and isinstance(retrieved, list):
                values = list(range(len(retrieved), 0, -1))  # list order is the ranking
            if (
                not isinstance(retrieved, list)
                or not isinstance(values, list)
                or len(values) != len(retrieved)
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
            ):
                errors.append(
                    f'line {number}: "retrieved" must be a list of ids and "scores" '
                    "a list of numbers as long"
                )
                continue
            qids += [str(row["qid"])] * len(retrieved)
            items += [str(i) for i in retrieved]
            scores += values
            lines += [number] * len(retrieved)
        qid = np.array([q.encode() for q in qids], dtype=np.bytes_)
        item = np.array([i.encode() for i in items], dtype=np.bytes_)
        score = np.asarray(scores, dtype=np.float64)
        line = np.asarray(lines, dtype=np.int64)
    if not np.isfinite(score).all():
        bad = line[~np.isfinite(score)][:MAX_ERRORS]
        raise FileFormatError(path, [f"line {n}: score is not a finite number" for n in bad])
    qids, query = _factorize(qid)
    items, item_code = _factorize(item)
    _check_duplicates(path, qids, items, query, item_code, line, "item")
    return Ranked(qids, items, query, item_code, score, line)


def read_qrels(path: Path | str, fmt: str | None = None) -> Judged:
    """A qrels (or JSONL gold) file as arrays; a repeated (qid, item) is an error."""
    path = Path(path)
    data = _read_bytes(path)
    if file_format(path, fmt) == "trec":
        parsed = _parsed_columns(path, data, ["id", "skip", "id", "id"])
        if parsed is not None:
            (qid, _iteration, item, grade), line = parsed
        else:
            (qid, _iteration, item, grade), line = _columns(
                path, data, 4, "qid iteration docid grade"
            )
        grade = _numbers(path, grade, line, "grade")
    else:
        qids, items, grades, lines = [], [], [], []
        for number, row, errors in _jsonl_rows(path, data, ("gold_evidence", "rel_map")):
            rel_map = row.get("rel_map") or {}
            evidence = row.get("gold_evidence") or []
            if (
                not isinstance(rel_map, dict)
                or not isinstance(evidence, list)
                or not all(isinstance(g, int) and not isinstance(g, bool) for g in rel_map.values())
            ):
                errors.append(
                    f"line {number}: gold_evidence must be a list of ids and rel_map an "
                    "object of whole-number grades"
                )
                continue
            merged = {str(i): 1 for i in evidence} | {str(k): v for k, v in rel_map.items()}
            qids += [str(row["qid"])] * len(merged)
            items += list(merged)
            grades += list(merged.values())
            lines += [number] * len(merged)
        qid = np.array([q.encode() for q in qids], dtype=np.bytes_)
        item = np.array([i.encode() for i in items], dtype=np.bytes_)
        grade = np.asarray(grades, dtype=np.int64)
        line = np.asarray(lines, dtype=np.int64)
    qids, query = _factorize(qid)
    items, item_code = _factorize(item)
    _check_duplicates(path, qids, items, query, item_code, line, "judgment of")
    return Judged(qids, items, query, item_code, grade, line)


@dataclass(frozen=True)
class Encoded:
    """Integer-coded inputs for ``measures.evaluate_arrays``.

    Queries are the qrels' queries in id order (``qids``); items are coded so that code
    order equals id byte order (trec_eval's tie-break compares ids with ``strcmp``).
    ``run_qids`` are the qrels queries that also appear in the run.
    """

    qids: list[str]
    run_query: np.ndarray
    run_item: np.ndarray
    run_score: np.ndarray
    qrel_query: np.ndarray
    qrel_item: np.ndarray
    qrel_grade: np.ndarray
    in_run: np.ndarray


def encode(judged: Judged, ranked: Ranked) -> Encoded:
    """Code ids as integers shared by both files; run rows of unjudged queries are left out."""
    qids = judged.qids
    position = np.searchsorted(qids, ranked.qids)
    position_safe = np.minimum(position, max(qids.size - 1, 0))
    known_qid = (
        (position < qids.size) & (qids[position_safe] == ranked.qids)
        if qids.size
        else (np.zeros(ranked.qids.size, dtype=bool))
    )
    known = known_qid[ranked.query] if ranked.query.size else np.zeros(0, dtype=bool)
    run_query = position_safe[ranked.query][known]
    items = np.union1d(judged.items, ranked.items)
    in_run = np.zeros(qids.size, dtype=bool)
    in_run[run_query] = True
    return Encoded(
        qids=[q.decode() for q in qids],
        run_query=run_query.astype(np.int64),
        run_item=np.searchsorted(items, ranked.items)[ranked.item][known].astype(np.int64),
        run_score=ranked.score[known],
        qrel_query=judged.query,
        qrel_item=np.searchsorted(items, judged.items)[judged.item].astype(np.int64),
        qrel_grade=judged.grade,
        in_run=in_run,
    )
