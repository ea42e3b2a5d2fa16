"""The adjudication queue: disputed units with every annotator's grade and evidence.

Built on ``gold.disagreements``: each item is one (query, unit) of the chosen level, shows
the unit's text with each annotator's evidence highlighted in it, and links to the whole
document. Resolving an item adjudicates that unit's span (``gold.services.adjudicate``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotator.evidence import Evidence
from annotator.models import Chunk, Document, Granularity, Judgment, Project, Query

from .disagreements import DISAGREEMENT_RULES, DisputedUnit, disagreements
from .models import Adjudication
from .units import DOCUMENTS, PAGES, Units

__all__ = [
    "DISAGREEMENT_RULES",
    "QueueItem",
    "adjudication_queue",
    "by_query",
    "disputed_units",
    "queue_items",
    "unit_evidence",
]

TEXT_LIMIT = 20_000  # characters of a unit shown in the queue; the document link has all


@dataclass
class Highlight:
    annotator: str
    index: int  # the annotator's colour
    start: int
    end: int
    grade: int


@dataclass
class QueueItem:
    """One disputed unit as the adjudicator sees it."""

    level: str
    disputed: DisputedUnit
    query: Query
    document: Document
    grades: list[tuple[str, int, int]]  # (annotator, colour index, grade)
    highlights: list[Highlight] = field(default_factory=list)
    adjudication: Adjudication | None = None

    @property
    def key(self) -> str:
        return f"{self.query.pk}-{self.disputed.unit}"

    @property
    def text(self) -> SafeString:
        unit = self.disputed
        return marked_text(self.document.text, unit.start, unit.end, self.highlights)

    @property
    def cut(self) -> bool:
        """The unit is longer than the queue shows; the document link has the rest."""
        return self.disputed.end - self.disputed.start > TEXT_LIMIT

    @property
    def document_url(self) -> str:
        query, unit = self.query, self.disputed
        url = reverse("annotator:label_query_document", args=[query.project.slug, query.pk])
        return f"{url}?document={self.document.pk}&at={unit.start}&end={unit.end}"


def marked_text(text: str, start: int, end: int, highlights: list[Highlight]) -> SafeString:
    """The unit's text, each piece in a ``<mark>`` naming the annotators whose evidence
    covers it (classes ``a0``, ``a1`` … give each annotator a colour)."""
    end = min(end, start + TEXT_LIMIT)
    bounds = {start, end}
    for h in highlights:
        bounds.update(min(max(p, start), end) for p in (h.start, h.end))
    html = []
    for a, b in itertools.pairwise(sorted(bounds)):
        piece = escape(text[a:b])
        covering = [h for h in highlights if h.start <= a and h.end >= b]
        if covering:
            names = " ".join(sorted({escape(h.annotator) for h in covering}))
            classes = " ".join(sorted({f"a{h.index}" for h in covering}))
            html.append(f'<mark class="ev {classes}" data-annotators="{names}">{piece}</mark>')
        else:
            html.append(str(piece))
    if start + TEXT_LIMIT < len(text) and end < start + TEXT_LIMIT + 1:
        html.append("…")
    return mark_safe("".join(html))  # noqa: S308 - every piece of text is escaped above


def _items(project: Project, level: str, units: Units, found: list[DisputedUnit]):
    queries = {q.pk: q for q in Query.objects.filter(pk__in={d.query_pk for d in found})}
    for query in queries.values():
        query.project = project  # each item's links name it: not one read per query
    documents = {d.pk: d for d in Document.objects.filter(pk__in={d.document_pk for d in found})}
    names = sorted({name for d in found for name in d.grades})
    colour = {name: index for index, name in enumerate(names)}
    labels: dict[tuple[int, int, str], list[tuple[int, int, int]]] = {}
    rows = Judgment.objects.filter(
        query_id__in=list(queries),
        document_id__in=list(documents),
        annotator__username__in=names,
    ).values_list("query_id", "document_id", "annotator__username", "start", "end", "grade")
    for query_pk, document_pk, name, start, end, grade in rows:
        labels.setdefault((query_pk, document_pk, name), []).append((start, end, grade))
    adjudications = {
        (a.query_id, a.document_id, a.start, a.end): a
        for a in Adjudication.objects.filter(
            query_id__in=list(queries), document_id__in=list(documents)
        ).select_related("adjudicator")
    }
    items = []
    for d in found:
        highlights = [
            Highlight(name, colour[name], max(s, d.start), min(e, d.end), g)
            for name in d.grades
            for s, e, g in labels.get((d.query_pk, d.document_pk, name), ())
            if (s < d.end and e > d.start) or (s == e == d.start == d.end)
        ]
        items.append(
            QueueItem(
                level=level,
                disputed=d,
                query=queries[d.query_pk],
                document=documents[d.document_pk],
                grades=[(name, colour[name], grade) for name, grade in sorted(d.grades.items())],
                highlights=highlights,
                adjudication=adjudications.get((d.query_pk, d.document_pk, d.start, d.end)),
            )
        )
    return items


def disputed_units(
    project: Project,
    level: str,
    *,
    units: Units,
    unresolved_only: bool = False,
    query: Query | None = None,
    unit: int | None = None,
    **options,
) -> list[DisputedUnit]:
    """The queue's disputed units at ``level`` (``options`` as for ``disagreements``) in
    its order, grouped by query, unresolved first; ``query``/``unit`` pick one."""
    found = disagreements(project, level, units=units, **options)
    if query is not None:
        found = [d for d in found if d.query_pk == query.pk and (unit is None or d.unit == unit)]
    if unresolved_only:
        found = [d for d in found if d.resolved is None]
    return found


def by_query(found: list[DisputedUnit]) -> list[list[DisputedUnit]]:
    """The disputed units in groups of one query each, in the queue's order."""
    groups: list[list[DisputedUnit]] = []
    for d in found:
        if not groups or groups[-1][0].query_pk != d.query_pk:
            groups.append([])
        groups[-1].append(d)
    return groups


def queue_items(project: Project, level: str, units: Units, found: list[DisputedUnit]):
    """The queue items (texts, every annotator's evidence, adjudications) of ``found``
    alone: a page of the queue reads the documents and labels of its own units."""
    return _items(project, level, units, found)


def adjudication_queue(
    project: Project,
    level: str,
    *,
    units: Units,
    unresolved_only: bool = False,
    limit: int = 500,
    query: Query | None = None,
    unit: int | None = None,
    **options,
) -> list[QueueItem]:
    """Queue items at ``level`` (``options`` as for ``disagreements``), grouped by query,
    unresolved first; ``query``/``unit`` pick one item (to re-render it in place)."""
    found = disputed_units(
        project,
        level,
        units=units,
        unresolved_only=unresolved_only,
        query=query,
        unit=unit,
        **options,
    )
    return _items(project, level, units, found[:limit])


def unit_evidence(project: Project, units: Units, index: int) -> Evidence:
    """The evidence an adjudication of unit ``index`` of ``units`` is given on."""
    document = Document.objects.get(project=project, pk=int(units.document[index]))
    start, end = int(units.start[index]), int(units.end[index])
    if units.level == DOCUMENTS:
        return Evidence(Granularity.DOCUMENT, document, start, end)
    if units.level == PAGES:
        return Evidence(Granularity.PAGE, document, start, end)
    chunk = Chunk.objects.get(pk=int(units.pk[index]))
    return Evidence.for_chunk(chunk)
