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
