"""A project's nuggets as arrays — the live ones or those a gold set froze — for measures,
exports and agreement alike (one reader of each source)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from annotator.models import Document, Project
from gold.models import GoldSet

from .models import GoldNugget, Importance, Nugget, NuggetEvidence


@dataclass(frozen=True)
class NuggetRows:
    """Nuggets in query pk order, each query's in its own order; evidence rows point at
    their nugget by index."""

    query: np.ndarray  # query pk of each nugget
    nugget_id: list[str]
    text: list[str]
    vital: np.ndarray
    author: list[str]  # username, "" when unknown
    ev_nugget: np.ndarray
    ev_document: np.ndarray
    ev_start: np.ndarray
    ev_end: np.ndarray
    source: str = "live"  # "live", or the gold set as "name vN"
    order: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.query.size)

    @property
    def nbytes(self) -> int:
        arrays = (self.query, self.vital, self.ev_nugget, self.ev_document, self.ev_start)
        return sum(a.nbytes for a in arrays) + self.ev_end.nbytes + 100 * len(self.text)

    @property
    def query_pks(self) -> np.ndarray:
        """The queries that have nuggets, ascending."""
        return np.unique(self.query)

    def of_query(self, query_pk: int) -> np.ndarray:
        """Indices of the query's nuggets, in order."""
        return np.flatnonzero(self.query == query_pk)

    def evidence_of(self, index: int) -> list[tuple[int, int, int]]:
        rows = np.flatnonzero(self.ev_nugget == index)
        return [
            (int(self.ev_document[r]), int(self.ev_start[r]), int(self.ev_end[r])) for r in rows
        ]

    def take(self, keep: np.ndarray) -> NuggetRows:
        """Only the nuggets where ``keep`` holds (their evidence renumbered)."""
        keep = np.asarray(keep, dtype=bool)
        new_index = np.cumsum(keep) - 1
        ev = keep[self.ev_nugget] if self.ev_nugget.size else np.zeros(0, dtype=bool)
        picked = np.flatnonzero(keep).tolist()
        return NuggetRows(
            self.query[keep],
            [self.nugget_id[i] for i in picked],
            [self.text[i] for i in picked],
            self.vital[keep],
            [self.author[i] for i in picked],
            new_index[self.ev_nugget[ev]],
            self.ev_document[ev],
            self.ev_start[ev],
            self.ev_end[ev],
            self.source,
            [self.order[i] for i in picked] if self.order else [],
        )


def _evidence(rows: list[tuple[int, int, int, int]], position: dict[int, int]):
    """(nugget key, document, start, end) rows → arrays, nugget keys as indices."""
    rows = sorted((position[k], d, s, e) for k, d, s, e in rows if k in position)
    table = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy(), table[:, 3].copy()


def live_nuggets(project: Project, *, queries: list[int] | None = None) -> NuggetRows:
    """The project's current nuggets (``queries``: only those queries', by pk)."""
    nuggets = Nugget.objects.in_project(project).ordered()
    if queries is not None:
        nuggets = nuggets.filter(query_id__in=queries)
    values = list(
        nuggets.values_list(
            "pk", "query_id", "nugget_id", "text", "importance", "order", "author__username"
        )
    )
    position = {v[0]: i for i, v in enumerate(values)}
    evidence = NuggetEvidence.objects.filter(nugget__query__project=project)
    if queries is not None:
        evidence = evidence.filter(nugget__query_id__in=queries)
    ev = _evidence(list(evidence.values_list("nugget_id", "document_id", "start", "end")), position)
    return NuggetRows(
        np.array([v[1] for v in values], dtype=np.int64),
        [v[2] for v in values],
        [v[3] for v in values],
        np.array([v[4] == Importance.VITAL for v in values], dtype=bool),
        [v[6] or "" for v in values],
        *ev,
        source="live",
        order=[v[5] for v in values],
    )


def frozen_nuggets(gold_set: GoldSet) -> NuggetRows:
    """The nuggets as ``gold_set`` froze them."""
    values = list(
        GoldNugget.objects.filter(gold_set=gold_set)
        .order_by("query_id", "order", "id")
        .values_list(
            "pk", "query_id", "nugget_id", "text", "importance", "order", "author", "evidence"
        )
    )
    position = {v[0]: i for i, v in enumerate(values)}
    names = {e["doc_id"] for v in values for e in v[7]}
    pks = dict(
        Document.objects.filter(project_id=gold_set.project_id, doc_id__in=names).values_list(
            "doc_id", "pk"
        )
    )
    # A document deleted since the freeze takes its spans with it, as it does its labels.
    rows = [
        (v[0], pks[e["doc_id"]], e["start"], e["end"])
        for v in values
        for e in v[7]
        if e["doc_id"] in pks
    ]
    return NuggetRows(
        np.array([v[1] for v in values], dtype=np.int64),
        [v[2] for v in values],
        [v[3] for v in values],
        np.array([v[4] == Importance.VITAL for v in values], dtype=bool),
        [v[6] for v in values],
        *_evidence(rows, position),
        source=f"{gold_set.name} v{gold_set.version}",
        order=[v[5] for v in values],
    )


def nugget_rows(project: Project, gold_set: GoldSet | None) -> NuggetRows:
    """The nuggets behind a setting: a frozen gold set's, or the live ones."""
    return frozen_nuggets(gold_set) if gold_set is not None else live_nuggets(project)


def document_ids(pks) -> dict[int, str]:
    """doc_id of each document pk."""
    pks = sorted({int(p) for p in pks})
    return dict(Document.objects.filter(pk__in=pks).values_list("pk", "doc_id"))
