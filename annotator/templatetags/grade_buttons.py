"""The grade buttons of every labelling form (cards, evidence rows, pages, documents)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from numerics.grades import GRADES
from web.escaping import escaped

register = template.Library()


@register.simple_tag
def grade_scale() -> str:
    """The grade scale for scripts (``<body data-grades="0 1 2 3">``): the digit keys that
    grade are read from ``numerics.grades``, never written into a script."""
    return " ".join(map(str, GRADES))


@register.simple_tag(takes_context=True)
def grade_buttons(context, current=None, keys=True) -> SafeString:
    """A button per grade of the screen's scale (``grades``: (grade, label) pairs), the
    ``current`` one pressed. Drawn in Python, not by an included template: a page of 30
    search results draws 60 sets of them, and the template made up most of its time.

    ``keys``: the digit keys press these buttons, so the grade is shown as a keycap;
    buttons the digits do not press show the grade without one: the document view's page
    and whole-document buttons (there a digit grades the selected text), evidence rows
    and whole-document search results (a digit grades the current card)."""
    buttons = []
    for grade, label in context["grades"]:
        pressed = grade == current
        name = escaped(label)
        cap = f"<kbd>{grade:d}</kbd>" if keys else f'<span class="grade-digit">{grade:d}</span>'
        buttons.append(
            f'<button type="submit" name="grade" value="{grade:d}" '
            f'class="grade-btn g{grade:d}{" is-set" if pressed else ""}" '
            f'aria-pressed="{"true" if pressed else "false"}" title="{name}">'
            f'{cap} <span class="grade-label">{name}</span></button>'
        )
    html = '<span class="grade-buttons" role="group">' + "".join(buttons) + "</span>"
    return mark_safe(html)  # noqa: S308 - grades are integers, labels escaped above
