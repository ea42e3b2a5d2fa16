"""Parameters of the metric pages: the evaluation setting and a drill-down grade."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.access import default_gold_set, require_grades
from annotator.assignments import clamp_seconds
from annotator.problems import shown
from annotator.sources import Sources, SourcesError, resolve_sources
from formats.rows import JsonRefused, load_json
from formats.values import value_problem
from gold.forms import MAPPING_CHOICES
from gold.units import levels
from numerics.gain import GainRule
from numerics.grades import MAX_GRADE, MIN_GRADE
from numerics.mapping import MappingPolicy
from numerics.measures.trec_eval import expand_measures
from web.errors import BadParameters
from web.fields import WholeField

from .access import MAX_ID
from .evaluation import (
    DEFAULT_MEASURES,
    MAX_MEASURES,
    OWN,
    EvaluationSetting,
    check_measures,
    default_level,
    evaluation_setting,
    measure_name,
)
from .gain import check_rule
from .models import MeasureChoice


class DashboardForm(forms.Form):
    """What the metrics are computed against; every bad parameter is a 400.

    The gold must be one the member may read (``annotator.access.require_grades``:
    403 otherwise); without one, the member's default (``default_gold_set``).
    """

    gold = forms.CharField(required=False, max_length=20)
    level = forms.CharField(required=False, max_length=200)
    k = WholeField(required=False, min_value=1, max_value=1000)
    mapping = forms.ChoiceField(required=False, choices=MAPPING_CHOICES)
    tag = forms.CharField(required=False, max_length=200)
    sort = forms.CharField(required=False, max_length=40)
    desc = forms.BooleanField(required=False)
    other = WholeField(required=False, min_value=1, max_value=MAX_ID)  # 2nd run
    baseline = WholeField(required=False, min_value=1, max_value=MAX_ID)
    # The dashboard's run filters and grouping: a run tag, a parameter "key=value", and
    # a parameter key (or "tag", "series", "chunking") to group the rows by.
    run_tag = forms.CharField(required=False, max_length=200)
    param = forms.CharField(required=False, max_length=400)
    group = forms.CharField(required=False, max_length=200)
    # Whose live labels count (``annotator.sources``): people,assessors unless chosen.
    sources = forms.CharField(required=False, max_length=2000)
    # How source quality enters the gain (``metrics.gain``): the gold set's or project's
    # rule unless named.
    gain = forms.CharField(required=False, max_length=200)

    def __init__(self, data, *, membership, remembered: bool = True):
        """``remembered``: without ``measure`` parameters, use the measures the member
        chose last (pages); the API passes False and gets the defaults. ``sources`` may
        come as one comma-separated value or repeated (the picker's checkboxes)."""
        if hasattr(data, "getlist") and len(data.getlist("sources")) > 1:
            data = data.copy()
            data["sources"] = ",".join(data.getlist("sources"))
        super().__init__(data)
        self.membership = membership
        self.project = membership.project
        self.user = membership.user if remembered else None
        listed = getattr(data, "getlist", lambda key: data.get(key) or [])
        self.requested_measures = [m.strip() for m in listed("measure") if m.strip()]
        self.requested_charts = [m.strip() for m in listed("chart") if m.strip()]

    def clean_gold(self):
        value = self.cleaned_data["gold"]
        if not value:
            return default_gold_set(self.membership, self.project.gold_sets.all())
        if value == "live":
            gold_set = None
        elif not (value.isascii() and value.isdigit() and len(value) <= 15):
            raise forms.ValidationError(_("Choose live labels or a gold set."))
        else:
            gold_set = self.project.gold_sets.filter(pk=int(value)).first()
            if gold_set is None:
                raise forms.ValidationError(_("No such gold set."))
        require_grades(self.membership, gold_set)
        return gold_set

    def clean_sources(self) -> Sources:
        try:
            return resolve_sources(self.project, self.cleaned_data["sources"])
        except SourcesError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_level(self):
        level = self.cleaned_data["level"] or default_level(self.project)
        if level != OWN and level not in levels(self.project):
            raise forms.ValidationError(_("Unknown level."))
        return level

    def clean_param(self) -> tuple[str, str] | None:
        value = self.cleaned_data["param"]
        if not value:
            return None
        key, equals, wanted = value.partition("=")
        if not equals or not key.strip():
            raise forms.ValidationError(_("Filter by a parameter as key=value."))
        return key.strip(), wanted.strip()

    @property
    def view_query(self) -> str:
        """The filters and grouping as URL parameters (kept by the refresh and links)."""
        data = self.cleaned_data
        params = {"run_tag": data.get("run_tag"), "group": data.get("group")}
        if data.get("param"):
            params["param"] = "=".join(data["param"])
        return urlencode({k: v for k, v in params.items() if v})

    def clean_k(self):
        return self.cleaned_data["k"] or 10

    def clean_gain(self) -> GainRule | None:
        try:
            return check_rule(self.project, self.cleaned_data["gain"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_mapping(self):
        text = self.cleaned_data["mapping"]
        if not text:
            return None  # the gold set's own policy, or the project's for live labels
        try:
            return MappingPolicy.parse(text)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None

    def clean(self):
        data = super().clean()
        k = data.get("k") or 10
        measures = self.requested_measures or remembered_measures(self.user, self.project)
        try:
            check_measures(measures, k)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        chosen = measures or DEFAULT_MEASURES
        names = {n for t in chosen for n in expand_measures(measure_name(t, k))}
        charts = [measure_name(c, k) for c in self.requested_charts]
        if any(c not in names for c in charts):
            raise forms.ValidationError(_("The chart draws only the dashboard's measures."))
        data["measures"] = measures
        data["charts"] = list(dict.fromkeys(charts))
        return data

    def setting(self) -> EvaluationSetting:
        """The evaluation setting the parameters name (gold grades loaded); once valid."""
        data = self.cleaned_data
        return evaluation_setting(
            self.project,
            level=data["level"],
            k=data["k"],
            gold_set=data["gold"],
            mapping=data["mapping"],
            measures=data["measures"] or None,
            charts=data["charts"],
            sources=data["sources"],
            gain=data["gain"],
        )


def dashboard_form(request, membership) -> DashboardForm:
    """The request's dashboard parameters, validated; ``BadParameters`` if they are not."""
    form = DashboardForm(request.GET, membership=membership)
    if not form.is_valid():
        raise BadParameters(_("Bad parameters."))
    return form


def run_setting(form: DashboardForm, run) -> EvaluationSetting:
    """The form's setting at ``run``'s level; ``BadParameters`` if it cannot measure it."""
    setting = form.setting()
    if not setting.can_evaluate(run):
        raise BadParameters(_("This run cannot be evaluated at that level."))
    return setting.for_run(run)


def remembered_measures(user, project) -> list[str]:
    """The measures ``user`` last chose for ``project``'s dashboards ([] if none)."""
    if user is None or not user.is_authenticated:
        return []
    choice = MeasureChoice.objects.filter(user=user, project=project).first()
    return list(choice.measures) if choice else []


class MeasureChoiceForm(forms.Form):
    """The measure picker: ticked catalogue entries and typed registry names."""

    measure = forms.MultipleChoiceField(required=False, choices=[])
    other = forms.CharField(required=False, max_length=1000)

    def __init__(self, data, *, catalogue: list[str]):
        super().__init__(data)
        self.fields["measure"].choices = [(m, m) for m in catalogue]

    def clean(self):
        data = super().clean()
        typed = [m.strip() for m in (data.get("other") or "").split(",") if m.strip()]
        measures = list(dict.fromkeys([*data.get("measure", []), *typed]))
        if not measures:
            raise forms.ValidationError(_("Choose at least one measure."))
        if len(measures) > MAX_MEASURES:
            raise forms.ValidationError(_("Choose at most %(n)d measures.") % {"n": MAX_MEASURES})
        for template in measures:
            try:
                expand_measures(measure_name(template, 10))
            except ValueError as error:
                raise forms.ValidationError(str(error)) from None
        data["measures"] = measures
        return data


class DrilldownGradeForm(forms.Form):
    """A grade given in the drill-down, with the seconds spent (as the labelling screen
    reports them)."""

    unit = WholeField(min_value=0)
    grade = WholeField(min_value=MIN_GRADE, max_value=MAX_GRADE)
    elapsed = forms.CharField(required=False, max_length=40)

    def clean_elapsed(self) -> float:
        return clamp_seconds(self.cleaned_data["elapsed"])


class MetricsExportForm(DashboardForm):
    """A metrics export: means per run, or per-query values of one ``run``."""

    format = forms.ChoiceField(required=False, choices=[("csv", "CSV"), ("xlsx", "Excel")])
    run = WholeField(required=False, min_value=1, max_value=MAX_ID)

    def clean_format(self) -> str:
        return self.cleaned_data["format"] or "csv"


def _holds_null(value) -> bool:
    """Whether a NUL character is in any string (key or value) of parsed JSON."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_null(k) or _holds_null(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_null(v) for v in value)
    return False


class RunFieldsForm(forms.Form):
    """A run's name, parameters, tags and series, as the edit page and the API take them.
    Text fields refuse NUL characters (a CharField's own check); so do the parameters'
    strings, which PostgreSQL's JSON type cannot store."""

    name = forms.CharField(max_length=200)
    parameters = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea)
    tags = forms.CharField(required=False, max_length=1000)
    series = forms.CharField(required=False, max_length=200)

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError(_("Give the run a name."))
        return name

    def clean_parameters(self) -> dict:
        text = (self.cleaned_data["parameters"] or "").strip()
        if not text:
            return {}
        try:
            value = load_json(text)
        except json.JSONDecodeError:
            raise forms.ValidationError(_("Parameters must be a JSON object.")) from None
        except JsonRefused as refused:  # NaN, Infinity, too deep, an integer too long
            raise forms.ValidationError(shown(refused.problem)) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(_("Parameters must be a JSON object."))
        if _holds_null(value):
            raise forms.ValidationError(_("Null characters are not allowed."))
        if problem := value_problem(value, "parameters", max_chars=10_000):
            raise forms.ValidationError(shown(problem))  # a lone surrogate, a control char
        return value

    def clean_tags(self) -> list[str]:
        tags = [t.strip() for t in (self.cleaned_data["tags"] or "").split(",")]
        return list(dict.fromkeys(t for t in tags if t))

    def clean_series(self) -> str:
        return (self.cleaned_data["series"] or "").strip()


class RunEditForm(RunFieldsForm):
    """What an owner may change on a run: its name, parameters, tags and series."""

    def __init__(self, data, *, run):
        super().__init__(data)
        self.run = run

    def clean_name(self) -> str:
        name = super().clean_name()
        if self.run.project.runs.filter(name=name).exclude(pk=self.run.pk).exists():
            raise forms.ValidationError(_("Another run of this project has that name."))
        return name


class RunUploadForm(RunFieldsForm):
    """The API's run upload: the run's fields, its chunking by name (none: documents) and
    the import's choices (``true`` / ``false``)."""

    chunking = forms.CharField(required=False, max_length=200)
    keep_known = forms.CharField(required=False)
    replace = forms.CharField(required=False)

    def clean_keep_known(self) -> bool:
        return self.cleaned_data["keep_known"] == "true"

    def clean_replace(self) -> bool:
        return self.cleaned_data["replace"] == "true"


class SourceRankingForm(forms.Form):
    """Two sets of label sources, a measure and where it is measured (``compare_sources``):
    the judge-vs-people page, the API and ``manage.py compare_sources`` read it alike."""

    a = forms.CharField(required=False, max_length=2000)
    b = forms.CharField(max_length=2000)
    measure = forms.CharField(required=False, max_length=200)
    level = forms.CharField(required=False, max_length=200)
    k = forms.IntegerField(required=False, min_value=1, max_value=1000)
    mapping = forms.ChoiceField(required=False, choices=MAPPING_CHOICES)

    def __init__(self, data, *, project):
        super().__init__(data)
        self.project = project

    def _sources(self, name: str, default: str | None = None) -> Sources:
        try:
            return resolve_sources(self.project, self.cleaned_data[name] or default)
        except SourcesError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_a(self) -> Sources:
        return self._sources("a")

    def clean_b(self) -> Sources:
        return self._sources("b")

    def clean_level(self) -> str:
        level = self.cleaned_data["level"] or default_level(self.project)
        if level != OWN and level not in levels(self.project):
            raise forms.ValidationError(_("Unknown level."))
        return level

    def clean_measure(self) -> str:
        k = self.data.get("k") or 10
        name = self.cleaned_data["measure"] or "nDCG@k"
        try:
            names = expand_measures(measure_name(name, int(k)))
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
        if len(names) != 1:
            raise forms.ValidationError(_("Choose one measure."))
        return names[0]

    def clean_mapping(self):
        text = self.cleaned_data["mapping"]
        return MappingPolicy.parse(text) if text else None

    def options(self) -> dict:
        data = self.cleaned_data
        return {
            "level": data["level"],
            "k": data["k"] or 10,
            "mapping": data["mapping"],
        }
