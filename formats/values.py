"""What a cell or JSON value may hold: ids are single tokens."""

from __future__ import annotations

import re

from .errors import gettext_noop

ID_WHITESPACE = gettext_noop("%(name)s %(value)s contains whitespace, which ids cannot hold")
_WHITESPACE = re.compile(r"\s")


def id_problem(name: str, value: str) -> str | None:
    """Ids are single tokens: TREC files, which every export writes, separate fields by
    whitespace, so an id holding any would break them."""
    if _WHITESPACE.search(value):
        return ID_WHITESPACE % {"name": name, "value": repr(value)}
    return None
