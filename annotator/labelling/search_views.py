"""The search screen: full-text search over chunks or documents, gradeable in place."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from web.htmx import for_htmx

from ..search import Found, highlight, search_count, search_page, split_terms
from .cards import chunk_cards, document_results
from .forms import SearchForm
from .screen import Screen, bad_request, member_view

SEARCH_LIMIT = 30


def _page_query(request: HttpRequest, found: Found) -> dict[str, str]:
    """The previous and next pages' query strings (the other parameters kept)."""
    links = {}
    number = found.offset // SEARCH_LIMIT + 1
    for name, target in (("previous", number - 1), ("next", number + 1)):
        if (name == "previous" and target >= 1) or (name == "next" and found.has_next):
            params = request.GET.copy()
            params["page"] = str(target)
            links[name] = "?" + params.urlencode()
    return links


@for_htmx("annotator/partials/label_search_count.html", if_target="search-count")
@for_htmx("annotator/partials/label_search_results.html")
@member_view("GET")
def label_query_search(request: HttpRequest, screen: Screen) -> HttpResponse:
    """Full-text search over the project's chunks or documents, gradeable in place.

    The results come first; a number of matches that takes a pass of its own over them
    (many matches, on SQLite) is asked for by the results once shown (``#search-count``),
    and only that number is computed and sent back."""
    form = SearchForm(request.GET)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    chunking = screen.search_chunking
    # A project without a chunking has only documents to search.
    scope = data["scope"] or ("chunks" if chunking else "documents")
    q = data["q"]
    terms = split_terms(q)
    cards, results, found = [], [], Found([], 0, 0)
    counting = getattr(request, "htmx", False) and request.htmx.target == "search-count"
    options = {
        "documents": scope == "documents",
        "chunking": chunking,
        "page": data["page"] or 1,
        "per_page": SEARCH_LIMIT,
    }
    if terms and counting:
        found = search_count(screen.project, q, **options)
    elif terms:
        found = search_page(screen.project, q, count=False, **options)
    if scope == "documents":
        results = document_results(screen, found.ids, terms)
    else:
        cards = chunk_cards(screen, found.ids)
        for card in cards:
            card.pieces = highlight(card.text, terms)
    context = screen.context(
        q=q,
        scope=scope,
        searched=bool(terms),
        chunking=chunking,
        cards=cards,
        results=results,
        found=found,
        page_query=_page_query(request, found),
    )
    return TemplateResponse(request, "annotator/label_search.html", context)
