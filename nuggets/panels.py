"""What the nugget panel shows — on the query page, beside the labelling screens and as a
page of its own: the query's nuggets with their evidence, the latest changes, and whether
the member may change them."""

from __future__ import annotations

from django.urls import reverse

from annotator.models import Document, Membership, Query, Role

from .access import edits_nuggets, reads_nuggets
from .models import Nugget, NuggetEvidence, NuggetHistory, NuggetProposal, ProposalStatus
from .proposals import DEFAULT_MAX_NUGGETS

SNIPPET = 240
HISTORY_SHOWN = 30


def _snippet(text: str) -> str:
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


def nugget_items(query: Query) -> list[dict]:
    """The query's nuggets in order, each with its evidence (document, span, text)."""
    nuggets = list(Nugget.objects.filter(query=query).ordered().select_related("author"))
    evidence = list(
        NuggetEvidence.objects.filter(nugget__query=query).order_by(
            "nugget_id", "document_id", "start"
        )
    )
    documents = {
        d.pk: d
        for d in Document.objects.filter(pk__in={e.document_id for e in evidence}).only(
            "doc_id", "title", "text", "page_starts"
        )
    }
    document_url = reverse("annotator:label_query_document", args=[query.project.slug, query.pk])
    spans: dict[int, list[dict]] = {}
    for e in evidence:
        document = documents[e.document_id]
        spans.setdefault(e.nugget_id, []).append(
            {
                "pk": e.pk,
                "doc_id": document.doc_id,
                "title": document.title,
                "start": e.start,
                "end": e.end,
                "page": document.page_of(e.start),
                "text": _snippet(document.text[e.start : e.end]),
                "url": f"{document_url}?document={document.pk}&at={e.start}&end={e.end}",
            }
        )
    return [
        {
            "pk": n.pk,
            "nugget_id": n.nugget_id,
            "text": n.text,
            "importance": n.importance,
            "vital": n.vital,
            "version": n.version,
            "position": index,
            "author": n.author.username if n.author else "",
            "evidence": spans.get(n.pk, []),
        }
        for index, n in enumerate(nuggets)
    ]


def panel_context(
    membership: Membership,
    query: Query,
    *,
    screen: str = "query",
    message: str = "",
    error: str = "",
) -> dict | None:
    """The panel's context, or None when the member may not read the query's nuggets."""
    if not reads_nuggets(membership, query):
        return None
    items = nugget_items(query)
    may_edit = edits_nuggets(membership)
    history = []
    if may_edit:
        rows = NuggetHistory.objects.filter(query=query).select_related("changed_by")
        history = [
            {
                "at": h.at,
                "who": h.changed_by.username if h.changed_by else "",
                "event": h.get_event_display(),
                "nugget_id": h.nugget_id,
                "old_text": h.old.get("text", ""),
                "text": h.new.get("text") or h.old.get("text", ""),
            }
            for h in rows.order_by("-id")[:HISTORY_SHOWN]
        ]
    pending = []
    if may_edit:
        pending = [
            {
                "pk": p.pk,
                "text": p.text,
                "importance": p.importance,
                "judge": str(p.judge_version) if p.judge_version_id else "",
                "evidence": p.evidence,
            }
            for p in NuggetProposal.objects.filter(query=query, status=ProposalStatus.PENDING)
            .select_related("judge_version__judge")
            .order_by("pk")
        ]
    judges = []
    if membership.role == Role.OWNER and query.project.judges.exists():
        judges = list(query.project.judges.order_by("name").values_list("pk", "name"))
    return {
        "project": query.project,
        "query": query,
        "items": items,
        "judges": judges,
        "max_nuggets": DEFAULT_MAX_NUGGETS,
        "proposals": pending,
        "n_vital": sum(1 for i in items if i["vital"]),
        "may_edit": may_edit,
        "history": history,
        "screen": screen,
        "message": message,
        "error": error,
        "url": reverse("nuggets:query_nuggets", args=[query.project.slug, query.pk]),
        "propose_url": reverse("nuggets:propose", args=[query.project.slug, query.pk]),
    }


def query_page_section(*, membership: Membership, query: Query) -> dict | None:
    return panel_context(membership, query, screen="query")


def labelling_section(*, membership: Membership, query: Query) -> dict | None:
    return panel_context(membership, query, screen="labelling")
