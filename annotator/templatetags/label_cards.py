"""The labelling screen's candidate cards, drawn in Python.

A labelling screen shows one card per candidate of the query's pool: 86 cards on a
query of the small scale project, more as runs are added, each with two forms. As a
template the cards made up most of the screen's time (0.7 ms a card; the screen's warm
p95 missed 300 ms at *medium*, docs/benchmarks.md), as the grade buttons did before
them. The HTML is the template's, byte for byte; every value is escaped here, and the
translated messages are the template's own msgids.
"""

from __future__ import annotations

import functools
import html

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from django.utils.translation import get_language, gettext, ngettext

from web.escaping import shown as _e

from .card_text import shown_once
from .grade_buttons import grade_buttons
from .search_hits import marked

register = template.Library()


def _(message: str) -> str:
    """``{% translate message %}``: translated, then escaped (named ``_`` so that
    ``makemessages`` finds the messages)."""
    return _translated(get_language(), message)


@functools.lru_cache(maxsize=256)
def _translated(language: str | None, message: str) -> str:
    """A message of the cards in one language (``language`` is the key: the active one)."""
    return html.escape(gettext(message))


def _csrf(context) -> str:
    """``{% csrf_token %}``."""
    token = context.get("csrf_token")
    if not token or token == "NOTPROVIDED":  # noqa: S105 - Django's marker, not a secret
        return ""
    return format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', token)


def _grade_part(card) -> str:
    if card.grade is not None:
        return (
            f'<span class="grade g{_e(card.grade)}" title="{_("Your grade")}">'
            f"{_e(card.grade)}</span>"
        )
    if card.covered_grade is not None:
        title = _("Judged through another of your labels; you can still grade it directly")
        covered = gettext('covered: <span class="grade g%(g)s">%(g)s</span> by %(by)s') % {
            "g": _e(card.covered_grade),
            "by": _e(card.covered_by),
        }
        return f'<span class="covered" title="{title}">{covered}</span>'
    return f'<span class="muted">{_("not judged")}</span>'


def _hidden_fields(context, card, position) -> str:
    """The fields both forms of a card send."""
    return (
        _csrf(context)
        + f'<input type="hidden" name="chunk" value="{_e(card.chunk_pk)}">'
        + f'<input type="hidden" name="version" value="{_e(card.version)}">'
        + (f'<input type="hidden" name="pos" value="{_e(position)}">' if position else "")
        + ('<input type="hidden" name="suggested" value="1">' if card.suggestion else "")
    )


def _labelling_part(context, card, position) -> str:
    """The grade form, the note and what the apps add, for a member who labels."""
    judge_url = _e(context.get("judge_url", ""))
    refused = context.get("refused")
    draft_note = context.get("draft_note")
    target = (
        f'action="{judge_url}" hx-post="{judge_url}" hx-target="closest .card-place" '
        f'hx-swap="innerHTML" hx-sync="#labelling:queue all"'
    )
    fields = _hidden_fields(context, card, position)
    out = ["\n  "]
    if card.suggestion:
        out.append(
            f'<p class="suggestion" id="suggestion-{_e(card.chunk_pk)}">{_("Suggestion")}: '
            f'<span class="grade g{_e(card.suggestion.grade)}">{_e(card.suggestion.grade)}</span> '
            f'<span class="suggestion-reason">{_e(card.suggestion.reason)}</span></p>'
        )
    out.append(f'\n  <form class="grade-form" method="post" {target}>\n    {fields}\n    ')
    out.append(grade_buttons(context, card.grade))
    out.append("\n  </form>\n  ")
    if refused and draft_note is None:
        out.append(f'<p class="refused" role="alert">{_e(refused)}</p>')
    out.append("\n  ")
    out.extend(_e(part) for part in card.extras)
    opened = " open" if card.note or draft_note is not None else ""
    out.append(f'\n  <details class="note"{opened}>\n    <summary>{_("Note")} <kbd>n</kbd>')
    if card.note:
        out.append(f': <span class="note-text">{_e(Truncator(card.note).chars(80))}</span>')
    out.append(f'</summary>\n    <form class="note-form" method="post" {target}>\n      ')
    out.append(fields + "\n      ")
    if refused and draft_note is not None:
        kept = _("Your note is kept below: save it again to keep it.")
        out.append(f'<p class="refused" role="alert">{_e(refused)} {kept}</p>')
    shown_note = draft_note if draft_note is not None else card.note
    out.append(
        f'\n      <textarea name="note" rows="2" maxlength="5000" aria-label="{_("Note")}">'
        f"{_e(shown_note)}</textarea>\n      "
    )
    if card.grade is not None:
        out.append(
            f'<input type="hidden" name="grade" value="{_e(card.grade)}">\n      '
            f'<button type="submit">{_("Save note")}</button> '
            f'<span class="muted">{_("Ctrl+Enter saves, Esc closes")}</span>\n      '
        )
    else:
        keep_hint = _(
            "Ctrl+Enter keeps the note: it is saved with the next grade you give this card. "
            "Esc closes."
        )
        out.append(
            f'<p class="note-grade muted">{_("Save the note with a grade:")} '
            f"{grade_buttons(context, None)}</p>\n      "
            f'<p><button type="submit" name="action" value="keep" class="keep-note">'
            f"{_('Keep the note without a grade')}</button> "
            f'<span class="muted">{keep_hint}</span></p>'
        )
    out.append("\n    </form>\n  </details>\n  ")
    return "".join(out)


def card_html(context, card, position) -> SafeString:
    """One candidate card (``<article class="candidate">``)."""
    graded = card.grade is not None
    out = [
        f'<article class="candidate{" graded" if graded else ""}'
        f'{" judged" if card.judged else ""}" data-chunk="{_e(card.chunk_pk)}" '
        f'data-doc-id="{_e(card.doc_id)}" data-start="{_e(card.start)}" '
        f'data-end="{_e(card.end)}"'
    ]
    if graded:
        out.append(f' data-grade="{_e(card.grade)}"')
    if card.covered_grade is not None:
        out.append(f' data-covered-grade="{_e(card.covered_grade)}"')
    out.append(
        ' tabindex="-1">\n  <header class="cand-head">\n'
        f'    <span class="cand-pos">{_e(position) if position else ""}</span>\n'
        f'    <span class="cand-doc" title="{_e(card.doc_id)}">'
        f"{_e(card.title or card.doc_id)}</span>\n    "
    )
    if card.page:
        out.append(f'<span class="cand-page">{gettext("Page %(n)s") % {"n": _e(card.page)}}</span>')
    out.append(f'\n    <span class="cand-grade">{_grade_part(card)}</span>\n')
    doc_url = _e(context.get("doc_url", ""))
    out.append(
        f'    <a class="open-doc" href="{doc_url}?document={_e(card.document_pk)}'
        f'&amp;at={_e(card.start)}&amp;end={_e(card.end)}">{_("Open in document")} '
        "<kbd>o</kbd></a>\n  </header>\n"
    )
    place = gettext("characters %(a)s–%(b)s of %(n)s") % {
        "a": _e(card.start),
        "b": _e(card.end),
        "n": _e(card.doc_length),
    }
    out.append(f'  <p class="cand-place muted">{place}')
    if card.folded:
        n = len(card.folded)
        also = ngettext(
            "also stands for %(n)s overlapping candidate",
            "also stands for %(n)s overlapping candidates",
            n,
        ) % {"n": _e(n)}
        names = ", ".join(_e(name) for name in card.folded)
        out.append(f' · <span class="cand-folded" title="{names}">{also}</span>')
    if card.pieces:
        text = marked(card.pieces)
    elif card.repeats:
        text = shown_once(card.parts)
    else:
        text = _e(card.text)
    out.append(
        f'</p>\n  <div class="cand-text" data-document="{_e(card.document_pk)}" '
        f'data-start="{_e(card.start)}" data-end="{_e(card.end)}">{text}</div>\n  '
    )
    if context.get("can_label"):
        out.append(_labelling_part(context, card, position))
    else:
        out.extend(_e(part) for part in card.extras)
        if card.note:
            out.append(f'<p class="note-text">{_e(card.note)}</p>')
    out.append("\n  ")
    if context.get("sees_all") and card.others:
        others = "".join(
            f'<span class="other">{_e(name)} <span class="grade g{_e(g)}">{_e(g)}</span>'
            + (f' <span class="other-note">({_e(note)})</span>' if note else "")
            + "</span> "
            for name, g, note in card.others
        )
        out.append(f'<p class="others">{_("Others:")} {others}</p>')
    out.append("\n</article>\n")
    return mark_safe("".join(out))  # noqa: S308 - every value is escaped above


def place_html(context, card, region, position) -> SafeString:
    """A card in its place, which reloads it when labels change elsewhere."""
    judge_url = _e(context.get("judge_url", ""))
    pos = f"&amp;pos={_e(position)}" if position else ""
    return mark_safe(  # noqa: S308 - every value is escaped
        f'<div class="card-place" id="{_e(region)}-{_e(card.chunk_pk)}" '
        f'hx-get="{judge_url}?chunk={_e(card.chunk_pk)}{pos}" hx-trigger="labels-refresh" '
        f'data-refresh data-refresh-document="{_e(card.document_pk)}" '
        f'data-refresh-span-or-chunk="{_e(card.chunk_pk)}" data-refresh-not-own '
        f'hx-sync="#labelling:queue all">{card_html(context, card, position)}</div>\n'
    )


@register.simple_tag(takes_context=True)
def label_card(context) -> SafeString:
    """The context's ``card`` at its ``position``."""
    return card_html(context, context["card"], context.get("position"))


@register.simple_tag(takes_context=True)
def card_place(context, card, region, position=None) -> SafeString:
    """``card`` in its place; ``region`` names the list ("cand", "found")."""
    return place_html(context, card, region, position)
