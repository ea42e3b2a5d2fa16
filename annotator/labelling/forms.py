"""Forms of the labelling screens: every parameter is validated; bad input is a 400."""

from __future__ import annotations

import re

from django import forms
from django.utils.translation import gettext_lazy as _

from numerics.grades import GRADES
from web.fields import WholeField

from ..models import AssignmentStatus, Granularity
from ..queue_order import queue_orders

GRADE_CHOICES = [(g, str(g)) for g in GRADES]


class AssignForm(forms.Form):
    SCOPES = [
        ("all", _("All queries")),
        ("tag", _("Queries with this tag")),
        ("qids", _("These query ids")),
    ]
    MODES = [
        ("even", _("Spread evenly: this many annotators per query")),
        ("each", _("By hand: every chosen annotator gets every chosen query")),
        ("remove", _("Take back unfinished assignments")),
    ]

    scope = forms.ChoiceField(choices=SCOPES, initial="all", label=_("Queries"))
    tag = forms.CharField(required=False, max_length=200, label=_("Tag"))
    qids = forms.CharField(
        required=False,
        max_length=200_000,
        widget=forms.Textarea(attrs={"rows": 3}),
        label=_("Query ids"),
        help_text=_("Separated by spaces, commas or new lines."),
    )
    annotators = forms.TypedMultipleChoiceField(
        coerce=int, label=_("Annotators"), widget=forms.CheckboxSelectMultiple
    )
    mode = forms.ChoiceField(choices=MODES, initial="even", label=_("How"))
    per_query = WholeField(
        min_value=1, max_value=50, initial=2, required=False, label=_("Annotators per query")
    )
    # Taking back every query's work is asked about first; the answer comes back here.
    confirm = forms.BooleanField(required=False)

    def __init__(self, *args, annotators=(), tags=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["annotators"].choices = [(u.pk, u.get_username()) for u in annotators]
        self.fields["tag"].widget = forms.Select(choices=[("", "—"), *((t, t) for t in tags)])

    def clean(self):
        data = super().clean()
        scope = data.get("scope")
        typed = bool((data.get("qids") or "").strip())
        if typed and scope == "all":
            # Ids the user typed say more than a dropdown left at its default.
            scope = data["scope"] = "qids"
        if typed and scope == "tag":
            self.add_error(
                "qids",
                _("Choose queries either by tag or by ids, not both: clear the ids or the tag."),
            )
        if scope == "tag" and not data.get("tag"):
            self.add_error("tag", _("Choose a tag."))
        if scope == "qids":
            data["qid_list"] = [q for q in re.split(r"[\s,]+", data.get("qids") or "") if q]
            if not data["qid_list"]:
                self.add_error("qids", _("List at least one query id."))
        if data.get("mode") == "even" and not data.get("per_query"):
            self.add_error("per_query", _("How many annotators per query?"))
        return data


class QueueFilterForm(forms.Form):
    status = forms.ChoiceField(required=False, choices=[("", _("All")), *AssignmentStatus.choices])
    page = WholeField(required=False, min_value=1)
    order = forms.ChoiceField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["order"].choices = [("", _("Query order"))] + [
            (order.key, order.label) for order in queue_orders()
        ]


class StatusForm(forms.Form):
    action = forms.ChoiceField(
        choices=[
            ("skip", "skip"),
            ("done", "done"),
            ("reopen", "reopen"),
            ("time", "time"),
            ("claim", "claim"),  # add this query to my own queue
        ]
    )
    reason = forms.CharField(required=False, max_length=500, strip=True)
    elapsed = forms.FloatField(required=False)
    confirm = forms.BooleanField(required=False)  # "done" although candidates are unjudged

    def clean(self):
        data = super().clean()
        if data.get("action") == "skip" and not data.get("reason"):
            self.add_error("reason", _("Say why you skip this query."))
        return data


class LabelChangeForm(forms.Form):
    """One label change: a grade (and maybe a note) on one piece of evidence, or undo."""

    # keep: a note on evidence not graded yet, kept until its first grade
    ACTIONS = [("grade", "grade"), ("delete", "delete"), ("undo", "undo"), ("keep", "keep")]

    action = forms.ChoiceField(choices=ACTIONS, required=False)
    grade = forms.TypedChoiceField(
        choices=GRADE_CHOICES, coerce=int, required=False, empty_value=None
    )
    note = forms.CharField(required=False, max_length=5000, strip=False)
    judgment = WholeField(required=False, min_value=1)
    history = WholeField(required=False, min_value=1)
    chunk = WholeField(required=False, min_value=1)
    granularity = forms.ChoiceField(
        required=False,
        choices=[(g, g) for g in (Granularity.PASSAGE, Granularity.PAGE, Granularity.DOCUMENT)],
    )
    document = WholeField(required=False, min_value=1)
    start = WholeField(required=False, min_value=0)
    end = WholeField(required=False, min_value=0)
    page = WholeField(required=False, min_value=1)
    text = forms.CharField(required=False, strip=False, max_length=2_000_000)
    elapsed = forms.FloatField(required=False)
    suggested = forms.BooleanField(required=False)  # a judge's suggestion was on screen
    pos = WholeField(required=False, min_value=1, max_value=100_000)  # card's number
    # The version of the label the screen showed (labels.label_version); a save whose
    # label changed since is refused rather than overwriting the other change.
    version = forms.CharField(required=False, max_length=64)
    # The screen's id of this action (a grade, a removal), kept on the logged change; an
    # undo names the action it reverses by it, even one whose save has not answered yet.
    action_id = forms.RegexField(required=False, regex=r"^[0-9a-f]{8,40}$", max_length=40)
    # A passage shorter than the project's short_passage that the annotator confirmed.
    short_ok = forms.BooleanField(required=False)

    def clean(self):
        data = super().clean()
        action = data.get("action") or "grade"
        data["action"] = action
        if action == "grade" and data.get("grade") is None:
            self.add_error("grade", _("Choose a grade from 0 to 3."))
        if action == "delete" and not data.get("judgment"):
            self.add_error("judgment", _("Which label?"))
        if action == "undo" and not (data.get("history") or data.get("action_id")):
            self.add_error("history", _("Nothing to undo."))
        if action in ("grade", "keep") and not (
            data.get("judgment") or data.get("chunk") or data.get("granularity")
        ):
            self.add_error(None, _("Which evidence is this grade for?"))
        return data


class EvidenceFragmentForm(forms.Form):
    """Which piece of the judging screen to show: a label, a chunk's card, a document, or all."""

    judgment = WholeField(required=False, min_value=1)
    chunk = WholeField(required=False, min_value=1)
    document = WholeField(required=False, min_value=1)
    chunking = WholeField(required=False, min_value=1)
    pos = WholeField(required=False, min_value=1, max_value=100_000)  # card's number


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=200, strip=True)
    scope = forms.ChoiceField(
        required=False, choices=[("chunks", _("Chunks")), ("documents", _("Documents"))]
    )
    chunking = WholeField(required=False, min_value=1)
    page = WholeField(required=False, min_value=1, max_value=10_000)


class DocumentViewForm(forms.Form):
    document = WholeField(required=False, min_value=1)
    page = WholeField(required=False, min_value=1)
    at = WholeField(required=False, min_value=0)
    end = WholeField(required=False, min_value=0)
    chunking = WholeField(required=False, min_value=1)
