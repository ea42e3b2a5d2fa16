"""Request bodies are refused by their declared size before a byte of them is read.

Django reads a body when something first asks for ``request.POST`` — the CSRF check
does, before any view — and spools file parts to temporary files on the way. So the
size is decided here, from ``Content-Length``, before the CSRF middleware runs:

- every body is held to the upload limit (``ASSAY_MAX_UPLOAD_BYTES``) plus
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` for the form's other fields;
- a body larger than ``ASSAY_ANONYMOUS_BODY_BYTES`` needs a signed-in user (session) or
  a valid API token (looked up here, from the header alone): an anonymous client, or one
  sending ``Authorization: Bearer junk``, cannot make the server spool a large upload;
- a body without ``Content-Length`` (``Transfer-Encoding: chunked``) is refused with 411:
  its size cannot be known up front (and Django would read none of it anyway).

What is read is then bounded by the declared length, so temporary files are too.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user
from django.http import HttpRequest, HttpResponse
from django.utils.formats import number_format
from django.utils.translation import gettext as _


def body_limit() -> int:
    """The most bytes any request body may hold: an upload and the form around it."""
    return settings.ASSAY_MAX_UPLOAD_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _refusal(message: str, status: int) -> HttpResponse:
    response = HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    # The body was not read: the connection cannot be reused for another request.
    response["Connection"] = "close"
    return response


def _bytes(count: int) -> str:
    return number_format(count, force_grouping=True)


class RequestBodyLimitMiddleware:
    """Answer 413 (or 411) before the body is read when it is too large (or unsized)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = self.refusal(request)
        return refusal if refusal is not None else self.get_response(request)

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        meta = request.META
        declared = meta.get("CONTENT_LENGTH")
        if not declared:
            if meta.get("HTTP_TRANSFER_ENCODING"):
                return _refusal(
                    _("Send a Content-Length: bodies of unknown size are refused."),
                    411,
                )
            return None
        try:
            size = int(declared)
        except ValueError:
            return _refusal(_("The Content-Length header is not a number."), 400)
        limit = body_limit()
        if size > limit:
            return _refusal(
                _(
                    "The request is %(size)s bytes, over the limit of %(limit)s bytes for an "
                    "upload; nothing was received."
                )
                % {"size": _bytes(size), "limit": _bytes(limit)},
                413,
            )
        if size > settings.ASSAY_ANONYMOUS_BODY_BYTES and not self._signed_in(request):
            return _refusal(
                _("Sign in to send more than %(limit)s bytes; nothing was received.")
                % {"limit": _bytes(settings.ASSAY_ANONYMOUS_BODY_BYTES)},
                413,
            )
        return None

    @staticmethod
    def _signed_in(request: HttpRequest) -> bool:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if header:
            from api.models import ApiToken  # the token's own rule, asked before any read

            scheme, _space, token = header.partition(" ")
            valid = ApiToken.is_valid(token.strip(), writing=True)  # read-only tokens send little
            return scheme.lower() == "bearer" and valid
        if not hasattr(request, "session"):
            return False
        return get_user(request).is_authenticated
