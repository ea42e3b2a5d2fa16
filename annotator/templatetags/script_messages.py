"""What the pages' scripts write, from the catalogue: a JSON island every page carries.

Scripts never hold user-facing text of their own: ``assayMessage(key, values)`` in
``assay.js`` reads it from the island that ``{% script_messages %}`` renders in the page's
language. A message with a count is a pair ``{"one": …, "other": …}`` (ngettext for 1 and
for 2), which is every plural form English and Chinese have. Placeholders are written as
in Python (``%(n)s``) and filled in by the script.
"""

from __future__ import annotations

from collections.abc import Callable

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

register = template.Library()

ISLAND_ID = "assay-messages"


def plural(forms: Callable[[int], str]) -> dict[str, str]:
    """A counted message's forms for 1 and for more (``forms``: n → ngettext(…, n))."""
    return {"one": forms(1), "other": forms(2)}


def script_messages() -> dict[str, str | dict[str, str]]:
    """Every message a script may show, in the active language, by key."""
    return {
        "saving": _("Saving…"),
        "saved": _("Saved"),
        "notSaved": _("Not saved (%(detail)s). Try again."),
        "offline": _("Not saved: the server could not be reached. Try again."),
        "nothingToUndo": _("Nothing to undo."),
        "undoing": _("Undoing…"),
        "selected": plural(
            lambda n: ngettext("%(n)s character selected", "%(n)s characters selected", n)
        ),
        "selectFirst": _(
            "Nothing is selected: select a passage with the mouse, then press 0–3. "
            "The buttons above grade the page or the whole document."
        ),
        "shortPassage": plural(
            lambda n: ngettext(
                "Only %(n)s character is selected. Press %(grade)s again to save it as a "
                "passage, or Esc to cancel.",
                "Only %(n)s characters are selected. Press %(grade)s again to save them as "
                "a passage, or Esc to cancel.",
                n,
            )
        ),
        "moreLines": plural(lambda n: ngettext("… %(n)s more line", "… %(n)s more lines", n)),
        "fewerLines": _("Show less"),
        "qualityDimension": _("The Shift keys now grade %(name)s."),
        "qualityNoSource": _("This document names no site: its source cannot be graded."),
        "refreshPaused": _("Updates paused while text is selected or the pointer is on the table."),
    }


@register.simple_tag
def script_messages_island() -> SafeString:
    """``<script type="application/json" id="assay-messages">``: data, never run (CSP-safe)."""
    return json_script(script_messages(), ISLAND_ID)
