"""Template helpers of the gold pages: a level or a consensus rule named for people."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

from ..policy import RULE_LABELS
from ..units import LEVEL_LABELS

register = template.Library()


@register.filter
def level_label(level: str) -> str:
    """ "documents" and "pages" in the user's language; a chunking's name as it is."""
    return str(LEVEL_LABELS.get(level, level))


@register.filter
def rule_label(rule: str) -> str:
    return str(RULE_LABELS.get(rule, rule))


SCALE_LABELS = {"nominal": _("nominal"), "ordinal": _("ordinal"), "interval": _("interval")}


@register.filter
def scale_label(scale: str) -> str:
    """The scale Krippendorff's alpha treats grades on, in the user's language."""
    return str(SCALE_LABELS.get(scale, scale))
