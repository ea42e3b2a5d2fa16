"""The document view: read a document for one query, label passages, pages or all of it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse

from web.htmx import for_htmx
from web.sections import sections

from ..labels import label_version
from ..models import Chunk, Document, Granularity, Judgment
from ..originals import page_picture
from ..screen_parts import card_parts
from .cards import EvidenceRow, evidence_rows
from .forms import DocumentViewForm
from .screen import Screen, bad_request, member_view
from .segments import Mark, part_of, render_segments, view_spans


@member_view("GET")
def label_query_document(request: HttpRequest, screen: Screen) -> HttpResponse:
    """A document read for one query; without ``?document=`` the list of pool documents."""
    form = DocumentViewForm(request.GET)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    if not data["document"]:
        return _document_list(request, screen)
    return _document_page(request, screen, data)


@for_htmx("annotator/partials/label_document_list_items.html")
def _document_list(request: HttpRequest, screen: Screen) -> HttpResponse:
    """The documents of the candidates and of the user's evidence."""
    doc_pks = set(
        Chunk.objects.filter(pk__in=screen.pool_ids).values_list("document_id", flat=True)
    )
    doc_pks.update(
        Judgment.objects.of(screen.query, screen.user).values_list("document_id", flat=True)
    )
    documents = (
        Document.objects.filter(pk__in=doc_pks, project=screen.project)
        .order_by("doc_id")
        .values("pk", "doc_id", "title")
    )
    context = screen.context(documents=list(documents))
    return TemplateResponse(request, "annotator/label_document_list.html", context)


@for_htmx("annotator/partials/label_document_view.html")
def _document_page(request: HttpRequest, screen: Screen, data: dict) -> HttpResponse:
    """One part (page or window) of a document with the user's evidence drawn over it."""
    context = document_context(
        screen, data["document"], page=data["page"], at=data["at"], focus_end=data["end"]
    )
    # Beside the text, drawn again with it on a page turn (the query's nuggets …).
    context["sections"] = sections("labelling", membership=screen.membership, query=screen.query)
    return TemplateResponse(request, "annotator/label_document.html", context)


def document_context(
    screen: Screen, document_pk: int, *, page: int | None, at: int | None, focus_end: int | None
) -> dict:
    """Page ``page`` of the document, or the page holding ``at`` (focused up to ``focus_end``)."""
    document = get_object_or_404(Document, project=screen.project, pk=document_pk)
    spans = view_spans(document.text, list(document.page_starts))
    if page is None and at is not None:
        page = part_of(spans, at)
    page = min(max(page or 1, 1), len(spans))
    start, end = spans[page - 1]
    labels = Judgment.objects.of(screen.query, screen.user).filter(document=document)
    mine = list(labels.order_by("start", "end"))
    marks = [
        Mark(j.start, j.end, j.grade, j.pk)
        for j in mine
        if j.granularity in (Granularity.PASSAGE, Granularity.CHUNK)
    ]
    focus = (at, focus_end) if at is not None and focus_end is not None and focus_end > at else None
    # Rows say a page only where the document has pages (a part of a page-less document
    # is not a page); "Show" finds the part from the row's offsets.
    evidence = evidence_rows(labels.order_by("start", "end", "granularity"), own=True)
    others: list[EvidenceRow] = []
    if screen.sees_all:
        others = evidence_rows(
            Judgment.objects.visible_to(screen.membership)
            .filter(query=screen.query, document=document)
            .exclude(annotator=screen.user)
            .order_by("annotator__username", "start")
        )
    page_label = next(
        (j for j in mine if j.granularity == Granularity.PAGE and (j.start, j.end) == (start, end)),
        None,
    )
    document_label = next((j for j in mine if j.granularity == Granularity.DOCUMENT), None)
    base = screen.url("label_query_document")
    picture = page_picture(document, page, [m for m in marks if m.start < end and m.end > start])
    return screen.context(
        picture=picture,
        document=document,
        has_pages=bool(document.page_starts),
        page=page,
        n_pages=len(spans),
        page_start=start,
        page_end=end,
        page_url=f"{base}?document={document.pk}&page={page}",
        segments=render_segments(document.text, start, end, marks, focus),
        evidence=evidence,
        others=others,
        # What the apps above add about the document (its source's quality grade).
        extras=card_parts(screen, [document.pk]).get(document.pk, []),
        page_grade=page_label.grade if page_label else None,
        document_grade=document_label.grade if document_label else None,
        # The versions the page's grade buttons were shown with (a save of an outdated
        # one is refused and the newer grade shown).
        page_version=label_version(page_label.updated_at if page_label else None),
        document_version=label_version(document_label.updated_at if document_label else None),
        prev_url=f"{base}?document={document.pk}&page={page - 1}" if page > 1 else "",
        next_url=f"{base}?document={document.pk}&page={page + 1}" if page < len(spans) else "",
    )
