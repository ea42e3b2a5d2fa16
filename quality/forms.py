"""The owner's quality settings: a new dimension, a dimension's site field, the gain rule.

Every form checks everything before anything is written; its errors are translated.
"""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from numerics.gain import MINIMUM, WEIGHT, GainRule

from .dimensions import check_gain_rule, dimension_use
from .models import MAX_SCALE, SOURCE_QUALITY, QualityDimension, QualityUnit


def _words(text: str) -> list[str]:
    return [w.strip() for w in text.split(",") if w.strip()] if text.strip() else []


def _clean_labels(form: forms.Form, data: dict, top: int) -> None:
    """The English and Chinese labels as lists of words: none, or one per grade 0…top (an
    error on the field otherwise)."""
    for name in ("labels", "labels_zh"):
        words = _words(data.get(name) or "")
        if words and len(words) != top + 1:
            form.add_error(
                name,
                gettext("Give %(n)s labels (grades 0 to %(top)s), or none.")
                % {"n": top + 1, "top": top},
            )
        data[name] = words


def _check_site_field(project: Project, field: str) -> None:
    """A site field must be a metadata field of the project's documents (once it has any)."""
    documents = project.documents.all()
    if documents.exists() and not documents.filter(metadata__has_key=field).exists():
        raise forms.ValidationError(
            gettext("No document of this project has a metadata field %(field)s.")
            % {"field": field}
        )


class DimensionForm(forms.Form):
    """A new quality dimension; the default offered is "source quality" 0–3 per site."""

    key = forms.SlugField(label=_("Key"), max_length=40, initial=SOURCE_QUALITY["key"])
    name = forms.CharField(label=_("Name"), max_length=80, initial=SOURCE_QUALITY["name"])
    name_zh = forms.CharField(
        label=_("Name in Chinese"), max_length=80, required=False, initial=SOURCE_QUALITY["name_zh"]
    )
    max_grade = forms.IntegerField(
        label=_("Highest grade"), min_value=1, max_value=MAX_SCALE, initial=3
    )
    labels = forms.CharField(
        label=_("Labels"),
        required=False,
        initial=", ".join(SOURCE_QUALITY["labels"]),
        help_text=_("One per grade from 0, separated by commas (empty: the grades' numbers)."),
    )
    labels_zh = forms.CharField(
        label=_("Labels in Chinese"),
        required=False,
        initial=", ".join(SOURCE_QUALITY["labels_zh"]),
    )
    unit = forms.ChoiceField(label=_("Graded for"), choices=QualityUnit.choices, initial="site")
    site_field = forms.CharField(
        label=_("Site field"),
        max_length=100,
        required=False,
        initial="site",
        help_text=_("The documents' metadata field that names their site (per site only)."),
    )
    site_host = forms.BooleanField(
        label=_("The site is the host of this URL field"), required=False
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        # The default is offered until the project has it.
        self.offers_default = not QualityDimension.objects.filter(
            project=project, key=SOURCE_QUALITY["key"]
        ).exists()
        if not self.offers_default:
            for name in ("key", "name", "name_zh", "labels", "labels_zh"):
                self.fields[name].initial = ""

    def clean_key(self) -> str:
        key = self.cleaned_data["key"]
        if QualityDimension.objects.filter(project=self.project, key=key).exists():
            raise forms.ValidationError(gettext("This project already has this dimension."))
        return key

    def clean(self) -> dict:
        data = super().clean()
        top = data.get("max_grade")
        if top is not None:
            _clean_labels(self, data, top)
        if data.get("unit") == QualityUnit.SITE:
            field = (data.get("site_field") or "").strip()
            if not field:
                self.add_error(
                    "site_field", gettext("A dimension graded per site needs its field.")
                )
            else:
                try:
                    _check_site_field(self.project, field)
                except forms.ValidationError as error:
                    self.add_error("site_field", error)
            data["site_field"] = field
        else:
            data["site_field"], data["site_host"] = "", False
        return data


class SiteFieldForm(forms.Form):
    """Another site field for a dimension graded per site that has no grades yet."""

    dimension = forms.ModelChoiceField(
        label=_("Dimension"), queryset=QualityDimension.objects.none()
    )
    site_field = forms.CharField(label=_("Site field"), max_length=100)
    site_host = forms.BooleanField(
        label=_("The site is the host of this URL field"), required=False
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["dimension"].queryset = QualityDimension.objects.filter(
            project=project, unit=QualityUnit.SITE
        )

    def clean(self) -> dict:
        data = super().clean()
        dimension = data.get("dimension")
        if dimension is not None and dimension.grades.exists():
            self.add_error(
                "dimension",
                gettext("Its sites are already graded: the site field cannot change."),
            )
        field = (data.get("site_field") or "").strip()
        if field:
            try:
                _check_site_field(self.project, field)
            except forms.ValidationError as error:
                self.add_error("site_field", error)
        data["site_field"] = field
        return data


class GainRuleForm(forms.Form):
    """The project's gain rule, in the form ``?gain=`` takes."""

    rule = forms.CharField(
        label=_("Gain rule"),
        max_length=200,
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project

    def clean_rule(self) -> GainRule:
        try:
            rule = GainRule.parse(self.cleaned_data["rule"])
        except ValueError:
            raise forms.ValidationError(
                gettext(
                    "Unknown gain rule: use none, weight:<dimension>:w0,w1,… "
                    "or minimum:<dimension>:q."
                )
            ) from None
        try:
            return check_gain_rule(self.project, rule)
        except ValueError:
            dimension = QualityDimension.objects.filter(
                project=self.project, key=rule.dimension
            ).first()
            if dimension is None:
                message = gettext("This project has no quality dimension %(key)s.")
            elif rule.kind == WEIGHT:
                message = gettext("%(key)s is graded 0–%(top)s: give %(n)s weights.")
            elif rule.kind == MINIMUM:
                message = gettext("%(key)s is graded 0–%(top)s: the minimum is at most %(top)s.")
            else:  # pragma: no cover - every kind is named above
                message = gettext("Unknown gain rule.")
            top = dimension.max_grade if dimension else 0
            raise forms.ValidationError(
                message % {"key": rule.dimension, "top": top, "n": top + 1}
            ) from None


class EditDimensionForm(forms.Form):
    """New names and grade labels for a dimension; its key, scale, unit and grades stay."""

    dimension = forms.ModelChoiceField(
        label=_("Dimension"), queryset=QualityDimension.objects.none(), to_field_name="key"
    )
    name = forms.CharField(label=_("Name"), max_length=80)
    name_zh = forms.CharField(label=_("Name in Chinese"), max_length=80, required=False)
    labels = forms.CharField(
        label=_("Labels"),
        required=False,
        help_text=_("One per grade from 0, separated by commas (empty: the grades' numbers)."),
    )
    labels_zh = forms.CharField(label=_("Labels in Chinese"), required=False)

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.editing: QualityDimension | None = None
        self.fields["dimension"].queryset = QualityDimension.objects.filter(project=project)

    def show(self, dimension: QualityDimension) -> None:
        """Fill the form with ``dimension`` as it is, to be edited."""
        self.initial = {
            "dimension": dimension.key,
            "name": dimension.name,
            "name_zh": dimension.name_zh,
            "labels": ", ".join(map(str, dimension.labels)),
            "labels_zh": ", ".join(map(str, dimension.labels_zh)),
        }
        self.fields["dimension"].widget = forms.HiddenInput()
        self.editing = dimension

    def clean(self) -> dict:
        data = super().clean()
        dimension = data.get("dimension")
        if dimension is not None:
            _clean_labels(self, data, dimension.max_grade)
        return data


class DeleteDimensionForm(forms.Form):
    """Delete a dimension, confirmed; only one nobody graded and the gain rule does not
    name (``quality.dimensions.delete_dimension``): grades are never lost with it."""

    dimension = forms.ModelChoiceField(
        label=_("Dimension"), queryset=QualityDimension.objects.none(), to_field_name="key"
    )
    confirm = forms.BooleanField(
        label=_("Yes, delete this dimension"),
        help_text=_(
            "Only a dimension that was never graded can be deleted; a graded one keeps its "
            "grades and their history (rename it instead)."
        ),
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        self.fields["dimension"].queryset = QualityDimension.objects.filter(project=project)

    def clean_dimension(self) -> QualityDimension:
        dimension = self.cleaned_data["dimension"]
        use = dimension_use(dimension)
        if use.in_gain_rule:
            raise forms.ValidationError(
                gettext("The project's gain rule uses %(key)s: choose another rule first.")
                % {"key": dimension.key}
            )
        if use.rows:
            raise forms.ValidationError(
                gettext(
                    "%(key)s has %(grades)d grades and %(rows)d other recorded rows (their "
                    "history, final grades …): it is kept with them. Rename it instead."
                )
                % {"key": dimension.key, "grades": use.grades, "rows": use.total - use.grades}
            )
        return dimension
