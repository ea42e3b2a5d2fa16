"""Template helpers naming for people what the gold and metric pages hold as keys:
levels, consensus rules, alpha's scales, the live labels."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext_lazy as _

from ..policy import RULE_LABELS
from ..units import level_name

register = template.Library()

SCALE_LABELS = {"nominal": _("nominal"), "ordinal": _("ordinal"), "interval": _("interval")}
OWN_UNITS = _("each run's own units")
LIVE = _("live labels")


@register.filter
def level_label(level: str) -> str:
    """ "documents" and "pages" in the user's language; a chunking's name as it is."""
    if level == "own":  # metrics: each run measured at the level it retrieved
        return str(OWN_UNITS)
    return level_name(level)


@register.filter
def rule_label(rule: str) -> str:
    return str(RULE_LABELS.get(rule, rule))


@register.filter
def scale_label(scale: str) -> str:
    """The scale Krippendorff's alpha treats grades on, in the user's language."""
    return str(SCALE_LABELS.get(scale, scale))


@register.filter
def gold_label(gold: str) -> str:
    """What a dashboard measures against: the live labels, or a gold set by its name."""
    return str(LIVE) if gold == "live" else gold
