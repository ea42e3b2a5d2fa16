"""A document's original file, its page images and where a span lies on them: members only."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from web.downloads import safe_filename

from . import file_store
from .access import get_project_for_user
from .forms import SpanBoxesForm
from .models import Document
from .originals import DEFAULT_WIDTH, PAGE_WIDTHS, original_name, page_image, span_boxes


def _get_document_for_user(request: HttpRequest, slug: str, pk: int) -> Document:
    """A document of a project the user is a member of (any role); 404 otherwise."""
    project, _membership = get_project_for_user(request, slug)
    return get_object_or_404(Document, project=project, pk=pk)


@login_required
@require_GET
def document_original(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    document = _get_document_for_user(request, slug, pk)
    name = original_name(document)
    if name is None:
        raise Http404("This document was not imported from a file")
    response = FileResponse(
        file_store.open_file(name),
        as_attachment=True,
        filename=safe_filename(document.metadata.get("file_name") or name.rsplit("/", 1)[-1]),
        content_type=document.metadata.get("media_type") or "application/octet-stream",
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
@require_GET
def document_page_image(request: HttpRequest, slug: str, pk: int, page: int) -> HttpResponse:
    document = _get_document_for_user(request, slug, pk)
    try:
        width = int(request.GET.get("width", DEFAULT_WIDTH))
    except ValueError:
        width = -1
    if width not in PAGE_WIDTHS:
        return HttpResponse("width must be one of " + ", ".join(map(str, PAGE_WIDTHS)), status=400)
    name = page_image(document, page, width)
    if name is None:
        raise Http404("No image of this page")
    response = FileResponse(file_store.open_file(name), content_type="image/png")
    response["Cache-Control"] = "private, max-age=86400"
    return response


@login_required
@require_GET
def document_span_boxes(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """``?start=&end=`` (offsets in the document's text): the boxes of those characters on
    each page image, as shares of the page."""
    document = _get_document_for_user(request, slug, pk)
    form = SpanBoxesForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"errors": form.errors}, status=400)
    start, end = form.cleaned_data["start"], form.cleaned_data["end"]
    if end > len(document.text):
        return JsonResponse({"errors": {"end": ["past the end of the document"]}}, status=400)
    return JsonResponse({"start": start, "end": end, "pages": span_boxes(document, start, end)})
