"""Forms of the answer judging screen's saves."""

from __future__ import annotations

from django import forms

from .judging import Target
from .models import Aspect


class JudgmentForm(forms.Form):
    aspect = forms.ChoiceField(choices=Aspect.choices)
    target = forms.IntegerField(required=False, min_value=1)
    # Empty: remove the judgement.
    value = forms.IntegerField(required=False, min_value=0, max_value=3)
    version = forms.CharField(max_length=64)
    action = forms.CharField(max_length=40, required=False)

    def clean(self):
        data = super().clean()
        if "aspect" in data:
            target = None if data["aspect"] == Aspect.CRAG else data.get("target")
            if data["aspect"] != Aspect.CRAG and target is None:
                raise forms.ValidationError("a target is needed")
            data["target"] = Target(data["aspect"], target)
        return data


class UndoForm(forms.Form):
    action = forms.CharField(max_length=40)


class AdjudicationForm(forms.Form):
    aspect = forms.ChoiceField(choices=Aspect.choices)
    target = forms.IntegerField(required=False, min_value=1)
    value = forms.IntegerField(required=False, min_value=0, max_value=3)
    reason = forms.CharField(max_length=2000, required=False)

    def clean(self):
        data = super().clean()
        if "aspect" in data:
            target = None if data["aspect"] == Aspect.CRAG else data.get("target")
            if data["aspect"] != Aspect.CRAG and target is None:
                raise forms.ValidationError("a target is needed")
            data["target"] = Target(data["aspect"], target)
        return data


class AnswerCalibrationForm(forms.Form):
    """Two sides of the answers' calibration: label sources (``people``, ``judge:x`` …),
    and the answer runs (``runs``: a name per value, repeated, as the command's ``--runs``;
    none: every active run)."""

    a = forms.CharField(required=False, max_length=2000)
    b = forms.CharField(required=False, max_length=2000)
    runs = forms.MultipleChoiceField(required=False)

    def __init__(self, data=None, **kwargs):
        super().__init__(data, **kwargs)
        given = data.getlist("runs") if hasattr(data, "getlist") else []
        # Any name is taken here; calibrate_answers refuses one the project lacks.
        self.fields["runs"].choices = [(name, name) for name in given if len(name) <= 200]

    def clean_runs(self) -> list[str] | None:
        names = [n.strip() for n in self.cleaned_data["runs"] if n.strip()]
        if len(names) > 500:
            raise forms.ValidationError("name at most 500 runs")
        return list(dict.fromkeys(names)) or None


class LlmJudgingForm(forms.Form):
    """An answers job: the judge, the answer runs, the queries, at most N answers and the
    aspects (``answers.judge_jobs.plan_answers``)."""

    judge = forms.IntegerField(min_value=1)
    runs = forms.MultipleChoiceField(required=False)
    queries = forms.CharField(required=False, max_length=20_000)
    max = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)
    aspects = forms.MultipleChoiceField(
        choices=[
            (Aspect.NUGGET.value, Aspect.NUGGET.label),
            (Aspect.SUPPORT.value, Aspect.SUPPORT.label),
        ],
        required=False,
    )

    def __init__(self, *args, runs: list[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["runs"].choices = [(name, name) for name in runs]

    def plan_options(self) -> dict:
        data = self.cleaned_data
        return {
            "runs": data["runs"] or None,
            "qids": data["queries"].split() or None,
            "max_answers": data["max"],
            "aspects": data["aspects"] or [Aspect.NUGGET.value, Aspect.SUPPORT.value],
        }
