"""Import problems in the user's language: stored English wording matched to its template.

Problems are worded in English where files are read (``formats/`` knows no Django, and an
import runs in the worker, in no one's language) and stored as text. Each template is
registered where it is defined (``formats.errors.gettext_noop``); shown to a person, a
problem is matched against the templates and said again with the translated template.
A problem that matches none is shown as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from django.utils.translation import gettext

# Imported for what they register: the importers', readers' and document files' templates.
import annotator.importing  # noqa: F401
import formats.agreement
import formats.documents  # noqa: F401
from formats.errors import FILE, LINE, PAGE, PROBLEMS

_VALUE = re.compile(r"%\((\w+)\)[sd]")
_WRAPPERS = (LINE, PAGE, FILE)  # "where: what", the what itself a problem


def _pattern(template: str) -> re.Pattern:
    parts, position = [], 0
    for match in _VALUE.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        parts.append(f"(?P<{match.group(1)}>.+?)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.S)


@lru_cache(maxsize=1)
def _templates() -> list[tuple[re.Pattern, str]]:
    """Every registered template, the most specific (most fixed text) first."""
    unique = dict.fromkeys(t for t in PROBLEMS if t not in _WRAPPERS)
    fixed = {t: len(_VALUE.sub("", t)) for t in unique}
    return [(_pattern(t), t) for t in sorted(unique, key=lambda t: -fixed[t])]


def _value(text: str) -> str:
    """A value filled into a template: translated when it is itself a template."""
    return gettext(text) if text in PROBLEMS else text


def _plain(problem: str) -> str | None:
    """The problem translated through the first template it matches, or None."""
    for pattern, template in _templates():
        match = pattern.fullmatch(problem)
        if match:
            return gettext(template) % {k: _value(v) for k, v in match.groupdict().items()}
    return None


def translated(problem: str) -> str:
    """``problem`` in the active language, or as it is when no template matches."""
    for wrapper in _WRAPPERS:
        match = _pattern(wrapper).fullmatch(problem)
        if not match:
            continue
        inner = _plain(match["problem"])
        if inner is None and wrapper is not LINE:
            continue  # "a: b" that is no file's problem
        values = {**match.groupdict(), "problem": inner or match["problem"]}
        return gettext(wrapper) % values
    plain = _plain(problem)
    return problem if plain is None else plain
