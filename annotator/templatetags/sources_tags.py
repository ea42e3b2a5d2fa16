"""Label sources as screens name them: ``people`` → "people", ``judge:x@2`` → "judge x v2"."""

from __future__ import annotations

from django import template
from django.utils.translation import gettext as _

from annotator.sources import ASSESSORS, JUDGES, PEOPLE

register = template.Library()
UNJUDGED = "unjudged"  # coverage's share judged by none of the counted sources


@register.filter
def source_label(token: str) -> str:
    """One source token in the user's language."""
    if token == PEOPLE:
        return _("people")
    if token == ASSESSORS:
        return _("imported assessors")
    if token == JUDGES:
        return _("every judge's latest version")
    if token == UNJUDGED:
        return _("unjudged")
    if token.startswith("judge:"):
        slug, _at, number = token[len("judge:") :].partition("@")
        if number:
            return _("judge %(slug)s v%(n)s") % {"slug": slug, "n": number}
        return _("judge %(slug)s (latest version)") % {"slug": slug}
    return token


@register.filter
def sources_label(tokens) -> str:
    """Several sources, each in the user's language, joined."""
    return " · ".join(source_label(t) for t in tokens or ())


@register.filter
def sources_detail(sources) -> str:
    """Resolved sources (``annotator.sources.Sources``) as the sources line says them: each
    judge named by its latest version also says which version that is now."""
    parts = []
    for token in sources.tokens:
        if token == JUDGES and sources.latest:
            versions = ", ".join(
                _("judge %(slug)s v%(n)s") % {"slug": slug, "n": number}
                for slug, number in sorted(sources.latest.items())
            )
            parts.append(f"{source_label(token)} ({versions})")
        elif token.startswith("judge:") and "@" not in token and token[6:] in sources.latest:
            slug = token[len("judge:") :]
            parts.append(
                _("judge %(slug)s (latest version: v%(n)s)")
                % {"slug": slug, "n": sources.latest[slug]}
            )
        else:
            parts.append(source_label(token))
    return " · ".join(parts)
