"""What the quality app adds to the labelling screens: the quality row of every card and of
the document view (``annotator.screen_parts``), the undo of a quality grade by the undo key,
and the keys' help with the choice of the dimension the Shift keys grade (section
``labelling``)."""

from __future__ import annotations

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from .models import QualityDimension


def labelling_section(*, membership, query=None) -> dict | None:
    """The second row of keys: Shift+0–max grades the current card's source on the chosen
    dimension; with several dimensions, Shift+D (or the list) chooses which. None without
    a dimension."""
    dimensions = list(QualityDimension.objects.filter(project_id=membership.project_id))
    if not dimensions:
        return None
    return {"dimensions": dimensions}


def has_dimensions() -> RawSQL:
    """Whether the project of the membership row read has a quality dimension: an EXISTS
    in SQL (every labelling request reads it; a subquery expression costs more to build
    than the query it saves)."""
    return RawSQL(
        "EXISTS (SELECT 1 FROM quality_qualitydimension d "
        "WHERE d.project_id = annotator_membership.project_id)",
        [],
        output_field=BooleanField(),
    )


def register_all() -> None:
    from annotator.extensions import register_card_part, register_undoer
    from web.sections import register_section

    from .card_html import draw_card_quality
    from .labelling import card_part
    from .labelling_views import undo_from_screen

    # No dimension, no quality row: the membership read says so, not a query per answer.
    register_card_part(draw_card_quality, card_part, has_dimensions)
    register_undoer(undo_from_screen)
    register_section("labelling", "quality/partials/labelling_keys.html", labelling_section)
