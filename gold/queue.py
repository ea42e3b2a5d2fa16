"""The adjudication queue: evidence units on which annotators disagree."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, F, Max, Min, Q

from annotator.models import Judgment, Project

from .models import Adjudication

DISAGREEMENT_RULES = {
    "any": "grades differ",
    "relevance": "some say relevant, some not (at the project's threshold)",
    "spread2": "grades two or more apart",
}


@dataclass
class QueueItem:
    query: object
    granularity: str
    document: object
    start: int
    end: int
    chunk: object | None
    labels: list = field(default_factory=list)  # Judgments, one per annotator
    adjudication: Adjudication | None = None

    @property
    def key(self) -> str:
        return f"{self.query.pk}-{self.granularity}-{self.document.pk}-{self.start}-{self.end}"

    @property
    def text(self) -> str:
        return self.document.text[self.start : self.end]


def rule_filter(rule: str, threshold: int) -> Q:
    """The disagreement rule as a condition on a unit's lowest and highest grade."""
    if rule == "any":
        return Q(lo__lt=F("hi"))
    if rule == "relevance":
        return Q(lo__lt=threshold, hi__gte=threshold)
    if rule == "spread2":
        return Q(hi__gte=F("lo") + 2)
    raise ValueError(f"unknown disagreement rule {rule!r}")


UNIT_FIELDS = ("query_id", "granularity", "document_id", "start", "end")


def disagreement_queue(
    project: Project,
    rule: str = "any",
    *,
    include_pseudo: bool = False,
    unresolved_only: bool = False,
    limit: int = 500,
) -> list[QueueItem]:
    """Units labelled by two or more annotators whose grades disagree, widest spread first.

    The database finds the disagreeing units (one grouped query); only their labels are
    loaded.
    """
    judgments = Judgment.objects.filter(query__project=project)
    if not include_pseudo:
        pseudo = project.memberships.filter(is_pseudo=True).values("user_id")
        judgments = judgments.exclude(annotator_id__in=pseudo)
    units = (
        judgments.values(*UNIT_FIELDS)
        .annotate(n=Count("id"), lo=Min("grade"), hi=Max("grade"))
        .filter(Q(n__gte=2) & rule_filter(rule, project.relevance_threshold))
        .order_by(F("lo") - F("hi"), *UNIT_FIELDS)
    )
    adjudications = {
        tuple(getattr(a, f) for f in UNIT_FIELDS): a
        for a in Adjudication.objects.filter(query__project=project)
    }
    keys = [tuple(u[f] for f in UNIT_FIELDS) for u in units]
    if unresolved_only:
        keys = [k for k in keys if k not in adjudications]
    keys = keys[:limit]
    if not keys:
        return []
    wanted = set(keys)
    items: dict[tuple, QueueItem] = {}
    labels = (
        judgments.filter(query_id__in={k[0] for k in keys}, document_id__in={k[2] for k in keys})
        .select_related("query", "document", "chunk", "annotator")
        .order_by("annotator__username")
    )
    for j in labels:
        key = tuple(getattr(j, f) for f in UNIT_FIELDS)
        if key not in wanted:
            continue
        item = items.get(key)
        if item is None:
            item = items[key] = QueueItem(
                j.query,
                j.granularity,
                j.document,
                j.start,
                j.end,
                j.chunk,
                adjudication=adjudications.get(key),
            )
        item.labels.append(j)
    return [items[k] for k in keys if k in items]


def queue_item(query, granularity: str, document, start: int, end: int) -> QueueItem | None:
    """One unit with all its labels and its adjudication (for in-place re-rendering)."""
    unit = {"granularity": granularity, "document": document, "start": start, "end": end}
    labels = list(
        Judgment.objects.filter(query=query, **unit)
        .select_related("annotator", "chunk")
        .order_by("annotator__username")
    )
    if not labels:
        return None
    return QueueItem(
        query,
        granularity,
        document,
        start,
        end,
        labels[0].chunk,
        labels,
        Adjudication.objects.filter(query=query, **unit).first(),
    )
