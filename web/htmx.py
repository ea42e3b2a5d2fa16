"""The one place that chooses between a full page and its htmx partial.

Views return a ``TemplateResponse`` of the full page; ``for_htmx`` swaps in the partial
template (a fragment the page itself includes, so the two cannot drift apart) when the
request comes from htmx. Regions of a screen that depend on a change listen for an
event (``HX-Trigger``) instead of the server knowing the screen's layout.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse


def for_htmx(partial: str, *, if_target: str | None = None) -> Callable:
    """Decorate a view so that htmx requests get ``partial`` instead of the full page.

    ``if_target`` limits the swap to requests aimed at that element id (``HX-Target``).
    """

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            response = view(request, *args, **kwargs)
            if (
                isinstance(response, TemplateResponse)
                and getattr(request, "htmx", False)
                and (if_target is None or request.htmx.target == if_target)
            ):
                response.template_name = partial
            return response

        return wrapper

    return decorator
