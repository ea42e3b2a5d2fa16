"""Agreement on marked text: character-level F1 of two annotators' passages."""

from __future__ import annotations

import numpy as np


def _spans(spans) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = list(spans) if not isinstance(spans, np.ndarray) else spans
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=object), empty, empty
    doc = np.array([r[0] for r in rows], dtype=object)
    start = np.array([r[1] for r in rows], dtype=np.int64)
    end = np.array([r[2] for r in rows], dtype=np.int64)
    if np.any(end < start):
        raise ValueError("a span ends before it starts")
    return doc, start, end


def span_f1(spans_a, spans_b) -> float | None:
    """Character-level F1 between two annotators' passages for one query.

    Spans are (doc, start, end) triples, end exclusive; each annotator's overlapping spans
    are merged (a character counts once). With A and B the sets of marked characters,

    F1 = 2 |A ∩ B| / (|A| + |B|)

    (the Dice coefficient; the token/character-overlap F1 of span tasks, e.g. Rajpurkar et
    al. 2016). ``None`` when neither marked anything; 0.0 when they marked disjoint text.
    Vectorised as a sweep over the sorted span boundaries of both annotators.
    """
    doc_a, start_a, end_a = _spans(spans_a)
    doc_b, start_b, end_b = _spans(spans_b)
    docs = np.concatenate([doc_a, doc_a, doc_b, doc_b])
    if docs.size == 0:
        return None
    _names, doc = np.unique(docs.astype(str), return_inverse=True)
    position = np.concatenate([start_a, end_a, start_b, end_b])
    ka, kb = start_a.size, start_b.size
    step_a = np.concatenate([np.ones(ka), -np.ones(ka), np.zeros(2 * kb)])
    step_b = np.concatenate([np.zeros(2 * ka), np.ones(kb), -np.ones(kb)])
    order = np.lexsort((position, doc))
    doc, position = doc[order], position[order]
    cover_a = np.cumsum(step_a[order]) > 0  # coverage after each boundary
    cover_b = np.cumsum(step_b[order]) > 0
    length = np.where(doc[1:] == doc[:-1], np.diff(position), 0)
    size_a = int((length * cover_a[:-1]).sum())
    size_b = int((length * cover_b[:-1]).sum())
    if size_a + size_b == 0:
        return None
    both = int((length * (cover_a[:-1] & cover_b[:-1])).sum())
    return 2 * both / (size_a + size_b)
