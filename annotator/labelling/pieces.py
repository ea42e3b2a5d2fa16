"""One card per piece of text, and what covers it: the pool folded, labels mapped onto cards.

A query's candidates are pieces of text, not chunk ids: candidates from several chunkings
(or overlapping windows of one) that lie inside each other or share more than the
project's ``candidate_overlap`` of the shorter one are one card (``numerics.spans.
fold_overlapping``). A card's status comes from all the annotator's labels on the query —
chunk, passage, page or whole document, made anywhere — mapped onto the card's span under
the project's mapping policy, the rule the metrics use.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
from django.utils.translation import gettext as _

from numerics.mapping import best_evidence, map_pairs
from numerics.spans import SpanArrays, fold_overlapping, page_of

from ..models import Chunk, Granularity, Judgment

if TYPE_CHECKING:
    from .cards import Card
    from .screen import Screen


def chunk_spans(chunk_pks: list[int]) -> dict[int, tuple[int, int, int]]:
    """Each chunk's (document pk, start, end), by pk (unknown pks left out)."""
    return {
        pk: (doc, start, end)
        for pk, doc, start, end in Chunk.objects.filter(pk__in=chunk_pks).values_list(
            "pk", "document_id", "start", "end"
        )
    }


def fold_pool(
    chunk_pks: list[int],
    threshold: float,
    spans: dict[int, tuple[int, int, int]] | None = None,
) -> dict[int, list[int]]:
    """Representative chunk → the chunks folded into it (itself first), in pool order;
    ``spans``: ``chunk_spans(chunk_pks)`` if already read."""
    rows = spans if spans is not None else chunk_spans(chunk_pks)
    pks = [pk for pk in dict.fromkeys(chunk_pks) if pk in rows]
    if not pks:
        return {}
    columns = np.array([rows[pk] for pk in pks], dtype=np.int64).reshape(-1, 3)
    representative = fold_overlapping(columns[:, 0], columns[:, 1], columns[:, 2], threshold)
    groups: dict[int, list[int]] = {}
    for pk, rep in zip(pks, representative.tolist(), strict=True):
        groups.setdefault(pks[rep], []).append(pk)
    for rep, members in groups.items():
        members.sort(key=lambda pk: pk != rep)
    return groups


def repeated_parts(
    order: list[int], spans: dict[int, tuple[int, int, int]]
) -> dict[int, list[tuple[int, int, int]]]:
    """The parts of each card's text that an earlier card already shows.

    ``order``: the cards' chunks in screen order; ``spans``: chunk → (document, start,
    end). Cards that overlap too little to be folded into one (``fold_pool``) still share
    text: each such shared part is shown once, by the first card holding it, and later
    cards name it instead. Returns chunk → [(start, end, position of the earlier card)],
    in text order and not overlapping (where several earlier cards hold a part, the first).
    """
    shown: dict[int, list[tuple[int, int, int]]] = {}
    result: dict[int, list[tuple[int, int, int]]] = {}
    for position, pk in enumerate(order, 1):
        if pk not in spans:
            continue
        document, start, end = spans[pk]
        earlier = [
            (max(start, a), min(end, b), p)
            for a, b, p in shown.get(document, [])
            if max(start, a) < min(end, b)
        ]
        if earlier:
            cuts = sorted({x for a, b, _p in earlier for x in (a, b)})
            parts: list[tuple[int, int, int]] = []
            for a, b in itertools.pairwise(cuts):
                holders = [p for pa, pb, p in earlier if pa <= a and b <= pb]
                if not holders:
                    continue
                first = min(holders)
                if parts and parts[-1][1] == a and parts[-1][2] == first:
                    parts[-1] = (parts[-1][0], b, first)
                else:
                    parts.append((a, b, first))
            result[pk] = parts
        shown.setdefault(document, []).append((start, end, position))
    return result


def describe(granularity: str, start: int, end: int, page_starts, chunk_id: str) -> str:
    """A label as a card names it: "passage 120–180", "page 2", "whole document", a chunk."""
    if granularity == Granularity.DOCUMENT:
        return _("whole document")
    if granularity == Granularity.PAGE:
        return _("page %(n)s") % {"n": page_of(page_starts or [], start)}
    if granularity == Granularity.CHUNK:
        return _("chunk %(id)s") % {"id": chunk_id}
    return _("passage %(start)d–%(end)d") % {"start": start, "end": end}


def cover(screen: Screen, cards: list[Card]) -> None:
    """Set each card's covering grade (the best of the annotator's other labels on the
    query that reach the card's span, ``best_evidence``) and which label that is."""
    if not cards or screen.query is None:
        return
    labels = list(
        Judgment.objects.of(screen.query, screen.user)
        .filter(document_id__in={card.document_pk for card in cards})
        .values_list(
            "granularity",
            "document_id",
            "start",
            "end",
            "grade",
            "chunk_id",
            "chunk__chunk_id",
            "document__page_starts",
        )
    )
    if not labels:
        return
    policy = screen.project.mapping_policy()
    label, card_index = map_pairs(
        SpanArrays(*zip(*((row[1], row[2], row[3]) for row in labels), strict=True)),
        SpanArrays(
            [card.document_pk for card in cards],
            [card.start for card in cards],
            [card.end for card in cards],
        ),
        policy=policy,
    )
    # The card's own chunk label is its own grade, shown as such: not a covering label.
    other = np.array(
        [
            not (labels[row][0] == Granularity.CHUNK and labels[row][5] == cards[index].chunk_pk)
            for row, index in zip(label.tolist(), card_index.tolist(), strict=True)
        ],
        dtype=bool,
    ).reshape(-1)
    label, card_index = label[other], card_index[other]
    grades = np.array([labels[row][4] for row in label.tolist()], dtype=np.int64)
    for position in best_evidence(grades, card_index).tolist():
        granularity, _document, start, end, grade, _pk, chunk_id, pages = labels[label[position]]
        card = cards[int(card_index[position])]
        card.covered_grade = grade
        card.covered_by = describe(granularity, start, end, pages, chunk_id or "")
