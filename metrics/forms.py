"""Parameters of the metric pages: the evaluation setting and a drill-down grade."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.access import default_gold_set, require_grades
from annotator.assignments import clamp_seconds
from gold.forms import MAPPING_CHOICES
from gold.units import levels
from numerics.grades import MAX_GRADE, MIN_GRADE
from numerics.mapping import MappingPolicy

from .evaluation import EvaluationSetting, evaluation_setting


class DashboardForm(forms.Form):
    """What the metrics are computed against; every bad parameter is a 400.

    The gold must be one the member may read (``annotator.access.require_grades``:
    403 otherwise); without one, the member's default (``default_gold_set``).
    """

    gold = forms.CharField(required=False, max_length=20)
    level = forms.CharField(required=False, max_length=200)
    k = forms.IntegerField(required=False, min_value=1, max_value=1000)
    mapping = forms.ChoiceField(required=False, choices=MAPPING_CHOICES)
    chart = forms.CharField(required=False, max_length=40)
    tag = forms.CharField(required=False, max_length=200)
    sort = forms.CharField(required=False, max_length=40)
    desc = forms.BooleanField(required=False)
    other = forms.IntegerField(required=False, min_value=1)  # a drill-down's second run

    def __init__(self, data, *, membership):
        super().__init__(data)
        self.membership = membership
        self.project = membership.project

    def clean_gold(self):
        value = self.cleaned_data["gold"]
        if not value:
            return default_gold_set(self.membership, self.project.gold_sets.all())
        if value == "live":
            gold_set = None
        elif not value.isdigit():
            raise forms.ValidationError(_("Choose live labels or a gold set."))
        else:
            gold_set = self.project.gold_sets.filter(pk=int(value)).first()
            if gold_set is None:
                raise forms.ValidationError(_("No such gold set."))
        require_grades(self.membership, gold_set)
        return gold_set

    def clean_level(self):
        level = self.cleaned_data["level"] or "documents"
        if level not in levels(self.project):
            raise forms.ValidationError(_("Unknown level."))
        return level

    def clean_k(self):
        return self.cleaned_data["k"] or 10

    def clean_mapping(self):
        return MappingPolicy.parse(self.cleaned_data["mapping"] or "any_overlap")

    def setting(self) -> EvaluationSetting:
        """The evaluation setting the parameters name (gold grades loaded); once valid."""
        data = self.cleaned_data
        return evaluation_setting(
            self.project,
            level=data["level"],
            k=data["k"],
            gold_set=data["gold"],
            mapping=data["mapping"],
        )


class JudgeForm(forms.Form):
    """A grade given in the drill-down, with the seconds spent (as the labelling screen
    reports them)."""

    unit = forms.IntegerField(min_value=0)
    grade = forms.IntegerField(min_value=MIN_GRADE, max_value=MAX_GRADE)
    elapsed = forms.CharField(required=False, max_length=40)

    def clean_elapsed(self) -> float:
        return clamp_seconds(self.cleaned_data["elapsed"])


class MetricsExportForm(DashboardForm):
    """A metrics export: means per run, or per-query values of one ``run``."""

    format = forms.ChoiceField(required=False, choices=[("csv", "CSV"), ("xlsx", "Excel")])
    run = forms.IntegerField(required=False, min_value=1)

    def clean_format(self) -> str:
        return self.cleaned_data["format"] or "csv"
