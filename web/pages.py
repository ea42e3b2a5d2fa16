"""One page of a long list: every list shows at most ``PAGE_SIZE`` rows and a pager.

A list's total comes from a figure the database keeps when the caller has one (a
project's documents), else from one ``COUNT`` over the list's own rows, never from a join
that multiplies them. The pager's links keep the request's other parameters.
"""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.http import HttpRequest
from django.utils.translation import gettext as _

from .errors import BadParameters

PAGE_SIZE = 50


def page_of(
    request: HttpRequest,
    items,
    *,
    per_page: int | None = None,
    count: int | None = None,
    parameter: str = "page",
) -> Page:
    """The page the request asks for (``?page=N``, 1 when absent; past the end: the last).

    ``count``, when given, is the list's length as the database keeps it, so the pager
    needs no ``COUNT``. A page number that is not a positive whole number is a 400."""
    raw = request.GET.get(parameter, "") or "1"
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1 or len(raw) > 9:
        raise BadParameters(_("The page number must be a whole number from 1."))
    paginator = Paginator(items, per_page or PAGE_SIZE)
    if count is not None:
        paginator.count = count  # a cached property: the kept figure stands in for COUNT
    page = paginator.get_page(int(raw))
    page.parameter = parameter
    if page.has_previous():
        page.previous_query = _query(request, parameter, page.previous_page_number())
    if page.has_next():
        page.next_query = _query(request, parameter, page.next_page_number())
    return page


def _query(request: HttpRequest, parameter: str, number: int) -> str:
    params = request.GET.copy()
    params[parameter] = str(number)
    return "?" + params.urlencode()
