"""The search screen: full-text search over chunks or documents, gradeable in place."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from web.htmx import for_htmx

from ..search import highlight, search, split_terms
from .cards import chunk_cards, document_results
from .forms import SearchForm
from .screen import Screen, bad_request, member_view

SEARCH_LIMIT = 30


@for_htmx("annotator/partials/label_search_results.html")
@member_view("GET")
def label_query_search(request: HttpRequest, screen: Screen) -> HttpResponse:
    """Full-text search over the project's chunks or documents, gradeable in place."""
    form = SearchForm(request.GET)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    scope = data["scope"] or "chunks"
    chunking = screen.search_chunking
    q = data["q"]
    terms = split_terms(q)
    cards, results = [], []
    if terms and scope == "documents":
        doc_pks = search(screen.project, q, documents=True, limit=SEARCH_LIMIT)
        results = document_results(screen, doc_pks, terms)
    elif terms:
        chunk_pks = search(screen.project, q, chunking=chunking, limit=SEARCH_LIMIT)
        cards = chunk_cards(screen, chunk_pks)
        for card in cards:
            card.pieces = highlight(card.text, terms)
    context = screen.context(
        q=q,
        scope=scope,
        searched=bool(terms),
        chunking=chunking,
        cards=cards,
        results=results,
    )
    return TemplateResponse(request, "annotator/label_search.html", context)
