"""Ids as UTF-8 byte arrays: integer codes in trec_eval's ``strcmp`` order, and codes
shared by a qrels file and a run file for the measures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .arrays import Qrels, Ranked


def factorize(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
        distinct, head_codes = factorize(ids[heads])
        return distinct, np.repeat(head_codes, np.diff(np.r_[heads, ids.size]))
    order = np.argsort(columns[:, 0]) if words == 1 else np.lexsort(columns.T[::-1])
    ordered = columns[order]
    new = np.r_[True, np.any(ordered[1:] != ordered[:-1], axis=1)]
    codes = np.empty(ids.size, dtype=np.int64)
    codes[order] = np.cumsum(new) - 1
    return ids[order[new]], codes


def as_bytes(ids: list[str]) -> np.ndarray:
    """Text ids as a UTF-8 byte array (the form ``factorize`` sorts in byte order)."""
    return np.array([i.encode() for i in ids], dtype=np.bytes_)


@dataclass(frozen=True)
class Encoded:
    """Integer-coded inputs for ``measures.evaluate_arrays``.

    Queries are the qrels' queries in id order (``qids``); items are coded so that code
    order equals id byte order (trec_eval's tie-break compares ids with ``strcmp``).
    ``in_run`` marks the qrels queries that also appear in the run.
    """

    qids: list[str]
    run_query: np.ndarray
    run_item: np.ndarray
    run_score: np.ndarray
    qrel_query: np.ndarray
    qrel_item: np.ndarray
    qrel_grade: np.ndarray
    in_run: np.ndarray


def encode(qrels: Qrels, ranked: Ranked) -> Encoded:
    """Code ids as integers shared by both files; run rows of unjudged queries are left out."""
    qids = qrels.qids
    position = np.searchsorted(qids, ranked.qids)
    position_safe = np.minimum(position, max(qids.size - 1, 0))
    known_qid = (
        (position < qids.size) & (qids[position_safe] == ranked.qids)
        if qids.size
        else (np.zeros(ranked.qids.size, dtype=bool))
    )
    known = known_qid[ranked.query] if ranked.query.size else np.zeros(0, dtype=bool)
    run_query = position_safe[ranked.query][known]
    items = np.union1d(qrels.items, ranked.items)
    in_run = np.zeros(qids.size, dtype=bool)
    in_run[run_query] = True
    return Encoded(
        qids=[q.decode() for q in qids],
        run_query=run_query.astype(np.int64),
        run_item=np.searchsorted(items, ranked.items)[ranked.item][known].astype(np.int64),
        run_score=ranked.score[known],
        qrel_query=qrels.query,
        qrel_item=np.searchsorted(items, qrels.items)[qrels.item].astype(np.int64),
        qrel_grade=qrels.grade,
        in_run=in_run,
    )
