"""Forms of the nugget screens: every change to a query's nuggets, the project setting,
exports. Bad values are a 400, never a 500."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from web.fields import WholeField

from .exporting import FORMATS
from .models import MAX_NUGGET_TEXT, Importance

ACTIONS = ("create", "edit", "delete", "move", "merge", "link", "unlink", "accept", "reject")


class NuggetChangeForm(forms.Form):
    """One change: ``action`` and the fields it needs (``clean`` says which are missing)."""

    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    nugget = WholeField(required=False, min_value=1)
    version = WholeField(required=False, min_value=1)
    text = forms.CharField(required=False, max_length=MAX_NUGGET_TEXT)
    importance = forms.ChoiceField(required=False, choices=Importance.choices)
    position = WholeField(required=False, min_value=0, max_value=100_000)
    into = WholeField(required=False, min_value=1)
    evidence = WholeField(required=False, min_value=1)
    proposal = WholeField(required=False, min_value=1)
    # A span from a selection: the document, the offsets and the characters selected.
    document = WholeField(required=False, min_value=1)
    start = WholeField(required=False, min_value=0)
    end = WholeField(required=False, min_value=0)
    selected = forms.CharField(required=False, strip=False, max_length=200_000)

    NEEDS = {
        "create": ("text", "importance"),
        "edit": ("nugget",),
        "delete": ("nugget",),
        "move": ("nugget", "position"),
        "merge": ("nugget", "into"),
        "link": ("nugget", "document", "start", "end"),
        "unlink": ("nugget", "evidence"),
        "accept": ("proposal",),
        "reject": ("proposal",),
    }

    def clean(self):
        data = super().clean()
        action = data.get("action")
        for name in self.NEEDS.get(action, ()):
            if data.get(name) in (None, ""):
                self.add_error(name, _("This field is required."))
        has_span = [data.get(n) is not None for n in ("document", "start", "end")]
        if any(has_span) and not all(has_span):
            self.add_error("document", _("A passage needs its document, start and end."))
        return data


class NuggetSettingForm(forms.Form):
    annotators_see = forms.BooleanField(required=False)


class NuggetExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS], required=False)
    gold = WholeField(required=False, min_value=1)
    level = forms.CharField(required=False, max_length=200)

    def clean_format(self):
        return self.cleaned_data["format"] or "jsonl"


class ProposeForm(forms.Form):
    """A judge (of the project) and how many nuggets to ask for at most."""

    judge = WholeField(min_value=1)
    max = WholeField(min_value=1, max_value=50)
