"""Sections that apps above a page add to it: a template and the context it is drawn with.

A page names its places (``"gold_diff"``, ``"dashboard"``, ``"query_page"`` …) and renders
``sections(place, **values)``; an app registers ``register_section(place, template, build)``
when it starts, ``build(**values)`` returning the section's context, or None when it has
nothing to show there (or the member may not see it). So a page never imports the apps that
add to it, and each page documents the values it passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    place: str
    template: str
    build: Callable[..., dict | None]


@dataclass(frozen=True)
class Drawn:
    """A section ready for ``{% include drawn.template with section=drawn.context %}``."""

    template: str
    context: dict


_SECTIONS: dict[str, list[Section]] = {}


def register_section(place: str, template: str, build: Callable[..., dict | None]) -> None:
    """Add a section to every page that draws ``place`` (once per template)."""
    known = _SECTIONS.setdefault(place, [])
    if all(s.template != template for s in known):
        known.append(Section(place, template, build))


def sections(place: str, **values) -> list[Drawn]:
    """The sections registered for ``place`` that have something to show, in order."""
    drawn = []
    for section in _SECTIONS.get(place, ()):
        context = section.build(**values)
        if context is not None:
            drawn.append(Drawn(section.template, context))
    return drawn
