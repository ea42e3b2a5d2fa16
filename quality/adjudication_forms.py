"""The lead's final grade of a disputed source: the dimension, the source, the grade."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext

from annotator.models import Document, Project

from .grades import QualitySource
from .models import MAX_SCALE, QualityDimension


class FinalGradeForm(forms.Form):
    """A lead's final grade of one disputed source (``grade`` empty: clear it)."""

    dimension = forms.SlugField(max_length=40)
    source = forms.CharField(max_length=300)  # d<pk> or s:<site>
    grade = forms.IntegerField(min_value=0, max_value=MAX_SCALE, required=False)
    reason = forms.CharField(max_length=2000, required=False)
    open = forms.BooleanField(required=False)

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project

    def clean(self) -> dict:
        data = super().clean()
        dimension = QualityDimension.objects.filter(
            project=self.project, key=data.get("dimension")
        ).first()
        if dimension is None:
            raise forms.ValidationError(gettext("This project has no such dimension."))
        text = data.get("source") or ""
        source = None
        if dimension.per_site and text.startswith("s:") and text[2:]:
            source = QualitySource(site=text[2:])
        elif not dimension.per_site and text.startswith("d") and text[1:].isdigit():
            document = Document.objects.filter(project=self.project, pk=int(text[1:])).first()
            source = QualitySource(document=document) if document else None
        if source is None:
            raise forms.ValidationError(gettext("No such source for this dimension."))
        grade = data.get("grade")
        if grade is not None and grade > dimension.max_grade:
            raise forms.ValidationError(
                gettext("A grade of %(name)s is a whole number from 0 to %(max)d.")
                % {"name": dimension.shown_name, "max": dimension.max_grade}
            )
        data["dimension"], data["source"] = dimension, source
        return data
