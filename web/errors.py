"""Bad request parameters as an exception a view raises and one decorator answers with 400."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.http import HttpResponseBadRequest


class BadParameters(ValueError):
    """Parameters a view cannot serve; the message is shown to the user as it is."""


def answers_bad_parameters(view: Callable) -> Callable:
    """Turn ``BadParameters`` raised by the view (or its helpers) into a 400 with its text."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except BadParameters as error:
            return HttpResponseBadRequest(str(error))

    return wrapper
