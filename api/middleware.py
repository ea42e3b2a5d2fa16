"""Every answer under /api/ is JSON, errors included (404, 405, 413, 500 and the rest)."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse, JsonResponse

PREFIX = "/api/"
_KEPT_HEADERS = ("Allow", "Connection")


class JsonErrorsMiddleware:
    """Turn an error answer under /api/ that is not JSON into ``{"error": ...}``.

    Errors raised anywhere below this middleware (an unknown address, a method a view
    does not take, a body over the limit, an exception in a view) arrive here as
    Django's HTML or text responses; a pipeline reading the API gets JSON instead. A
    plain-text answer's text is kept as the message (it says what was wrong)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not request.path.startswith(PREFIX)
            or response.status_code < 400
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        return as_json(response)


def as_json(response: HttpResponse) -> JsonResponse:
    status = response.status_code
    message = ""
    if response.get("Content-Type", "").startswith("text/plain") and not response.streaming:
        message = response.content.decode("utf-8", "replace").strip()
    if not message:
        try:
            message = HTTPStatus(status).phrase.lower()
        except ValueError:
            message = "error"
    answer = JsonResponse({"error": message}, status=status)
    for header in _KEPT_HEADERS:
        if header in response:
            answer[header] = response[header]
    return answer
