"""The template filter that shows a card's text with the parts an earlier card shows folded."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import ngettext

from web.escaping import escaped

register = template.Library()


@register.filter
def shown_once(parts) -> SafeString:
    """Escaped text of ``Card.parts``: text shown here as it is; text an earlier card shows
    folded, its place named ("… 266 characters shown above in card 3") by generated
    content, and opened in place to read it again (label.js). The card's text nodes stay
    exactly the document's characters, so a selection in it maps back to offsets (the
    nugget panel counts them). Built in Python: no whitespace may enter pre-wrapped text."""
    html = []
    for text, position in parts:
        if position is None:
            html.append(escaped(text))
            continue
        n = len(text)
        label = ngettext(
            "… %(n)d character shown above in card %(card)d",
            "… %(n)d characters shown above in card %(card)d",
            n,
        ) % {"n": n, "card": position}
        html.append(
            f'<span class="repeat" data-card="{position:d}" data-label="{escaped(label)}" '
            f'title="{escaped(label)}" tabindex="0" role="button" aria-expanded="false">'
            f'<span class="repeat-text">{escaped(text)}</span></span>'
        )
    return mark_safe("".join(html))  # noqa: S308 - every piece of text is escaped above
