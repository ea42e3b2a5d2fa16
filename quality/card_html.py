"""The quality rows of a card, drawn in Python rather than by an included template.

The labelling screen draws a page of up to 155 cards, each with these rows: through the
template engine they cost about a millisecond a card (the larger part of the screen's
time on a project with a dimension). This writes the same markup; ``static/assay/quality.js``
reads its classes and ``data-`` attributes. Every text is escaped here.
"""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from web.escaping import escaped

from .labelling import QualityRow

_SYNC = 'hx-sync="#labelling:queue all"'


def draw_card_quality(part: dict) -> SafeString:
    """The rows of one document (``labelling.part_context``) as HTML."""
    url = escaped(part["url"])
    document = int(part["document"])
    head = (
        f'<div class="quality-part{"" if part["single"] else " several"}" '
        f'data-document="{document:d}" hx-get="{url}?document={document:d}" '
        f'hx-trigger="quality-refresh" hx-target="this" hx-swap="outerHTML" {_SYNC}>\n'
    )
    rows = "".join(_row(part, row, url) for row in part["rows"])
    return mark_safe(head + rows + "</div>")  # noqa: S308 - every value escaped above


def _row(part: dict, row: QualityRow, url: str) -> str:
    dimension = row.dimension
    key = escaped(dimension.key)
    name = escaped(dimension.shown_name)
    grade = row.grade
    out = [
        f'<div class="quality-row{" is-active" if part["single"] else ""}" '
        f'data-dimension="{key}" data-token="{escaped(row.token)}"'
        + (f' data-quality-grade="{grade:d}"' if grade is not None else "")
        + ">\n",
        f'  <span class="quality-name">{name}</span>\n',
        _source(row),
    ]
    if not row.gradable:
        field = _("names no site (field %(field)s)") % {"field": dimension.site_field}
        out.append(f'  <span class="muted quality-no-site">{escaped(field)}</span>\n')
    elif part["can_label"]:
        out.append(_form(part, row, url, key, name))
    elif grade is not None:
        out.append(
            f'  <span class="quality-grade q{grade:d}">{grade:d} · {escaped(row.label)}</span>\n'
        )
    else:
        out.append(f'  <span class="muted">{escaped(_("not graded"))}</span>\n')
    if part["sees_all"] and row.others:
        others = "".join(
            f'<span class="other">{escaped(other)} '
            f'<span class="quality-grade q{g:d}">{g:d}</span></span> '
            for other, g in row.others
        )
        out.append(f'  <span class="quality-others">{escaped(_("Others:"))} {others}</span>\n')
    if row.refused:
        out.append(f'  <p class="refused" role="alert">{escaped(row.refused)}</p>\n')
    out.append("</div>")
    return "".join(out)


def _source(row: QualityRow) -> str:
    """Whose grade the row sets: the site (one grade for all its documents) or this document."""
    if row.site:
        title = escaped(_("One grade for every document of this site"))
        shown = escaped(_("site %(site)s") % {"site": row.site})
    else:
        title = ""
        shown = escaped(_("this document")) if row.gradable else ""
    return f'  <span class="quality-source" title="{title}">{shown}</span>\n'


def _form(part: dict, row: QualityRow, url: str, key: str, name: str) -> str:
    buttons = "".join(
        f'<button type="submit" name="grade" value="{g:d}" '
        f'class="quality-btn q{g:d}{" is-set" if pressed else ""}" '
        f'aria-pressed="{"true" if pressed else "false"}" title="{escaped(label)}">'
        f'<kbd class="shift-key">⇧{g:d}</kbd> <span class="grade-label">{escaped(label)}</span>'
        "</button>"
        for g, label, pressed in row.buttons
    )
    clear = (
        '    <button type="submit" name="action" value="delete" class="quality-clear" '
        f'title="{escaped(_("Remove this quality grade"))}">×</button>\n'
        if row.grade is not None
        else ""
    )
    return (
        f'  <form class="quality-form" method="post" action="{url}" hx-post="{url}" '
        f'hx-target="closest .quality-part" hx-swap="outerHTML" {_SYNC} data-undoable>\n'
        f'    <input type="hidden" name="csrfmiddlewaretoken" value="{escaped(part["csrf"])}">'
        f'<input type="hidden" name="dimension" value="{key}">'
        f'<input type="hidden" name="document" value="{int(row.document_pk):d}">'
        f'<input type="hidden" name="version" value="{escaped(row.version)}">\n'
        f'    <span class="quality-buttons" role="group" aria-label="{name}">{buttons}</span>\n'
        f"{clear}  </form>\n"
    )
