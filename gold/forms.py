from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.sources import SourcesError, parse_sources
from numerics.consensus import RULES
from numerics.grades import MAX_GRADE, MIN_GRADE
from numerics.mapping import MappingPolicy
from web.fields import WholeField

from .disagreements import DISAGREEMENT_RULES
from .policy import RULE_LABELS


class LevelForm(forms.Form):
    """A level (documents, pages or a chunking) and a mapping policy; bad values → 400."""

    level = forms.CharField(max_length=200, required=False)
    mapping = forms.CharField(max_length=40, required=False)
    # Whose labels are compared (``annotator.sources``; the page's default when empty).
    sources = forms.CharField(max_length=2000, required=False)

    def __init__(self, *args, levels: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.levels = levels

    def clean_level(self):
        level = self.cleaned_data["level"] or "documents"
        if level not in self.levels:
            raise forms.ValidationError(_("Unknown level."))
        return level

    def clean_sources(self) -> str | None:
        try:
            return (
                ",".join(parse_sources(self.cleaned_data["sources"]))
                if self.cleaned_data["sources"]
                else None
            )
        except SourcesError as error:
            raise forms.ValidationError(str(error)) from None

    def clean_mapping(self):
        try:
            text = self.cleaned_data["mapping"]
            return MappingPolicy.parse(text) if text else None  # None: the project's
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None


class QueueFilterForm(LevelForm):
    rule = forms.ChoiceField(choices=list(DISAGREEMENT_RULES.items()), required=False)
    unresolved = forms.BooleanField(required=False)
    pseudo = forms.BooleanField(required=False, label=_("Include imported labels"))
    format = forms.ChoiceField(choices=[("jsonl", "JSONL"), ("csv", "CSV")], required=False)

    def clean_rule(self):
        return self.cleaned_data["rule"] or "any"


class AdjudicateForm(QueueFilterForm):
    """One unit's final grade: the query, the unit (by id, at the queue's level), a reason."""

    query = WholeField(min_value=1)
    unit = forms.CharField(max_length=300)
    grade = WholeField(min_value=MIN_GRADE, max_value=MAX_GRADE)
    reason = forms.CharField(required=False, max_length=2000)


class FreezeForm(forms.Form):
    name = forms.SlugField(max_length=100, initial="gold", label=_("Name"))
    annotators = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Annotators"),
        help_text=_("None ticked: those who labelled among the sources below."),
    )
    sources = forms.CharField(
        required=False,
        max_length=2000,
        label=_("Label sources"),
        help_text=_(
            "people (default), assessors, judges, judge:<slug> or judge:<slug>@<n>, comma-separated"
        ),
    )
    rule = forms.ChoiceField(
        choices=[(r, RULE_LABELS.get(r, r)) for r in RULES],
        initial="majority",
        label=_("Consensus rule"),
    )
    min_annotators = WholeField(min_value=1, max_value=50, initial=1, label=_("Minimum annotators"))
    adjudicated_first = forms.BooleanField(
        required=False, initial=True, label=_("Adjudicated grade first")
    )
    mapping = forms.ChoiceField(choices=[], required=False, label=_("Mapping"))
    note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Note")
    )

    def __init__(self, *args, annotators: list[tuple[str, str]] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["annotators"].choices = list(annotators)
        self.fields["mapping"].choices = MAPPING_CHOICES

    def clean_mapping(self):
        text = self.cleaned_data["mapping"]
        return MappingPolicy.parse(text) if text else None  # None: the project's


class ReleaseForm(forms.Form):
    released = forms.ChoiceField(choices=[("1", "release"), ("0", "withdraw")])


class DiffForm(LevelForm):
    against = WholeField(min_value=1, required=False)


MAPPING_CHOICES = [
    ("any_overlap", _("any overlap")),
    ("contains", _("unit contains the evidence")),
    ("evidence_overlap>=0.5", _("overlap ≥ half of the evidence")),
    ("chunk_overlap>=0.5", _("overlap ≥ half of the unit")),
]


class ExportForm(forms.Form):
    """Which level, mapping policy and format a gold-set export uses; bad values → 400."""

    level = forms.CharField(max_length=200, initial="documents")
    mapping = forms.CharField(max_length=40, required=False)
    format = forms.ChoiceField(
        choices=[
            ("jsonl", "JSONL"),
            ("qrels", "TREC qrels"),
            ("beir", "BEIR qrels (TSV)"),
            ("xlsx", "Excel"),
        ]
    )

    def __init__(self, *args, levels: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.levels = levels

    def clean_level(self):
        level = self.cleaned_data["level"]
        if level not in self.levels:
            raise forms.ValidationError(_("Unknown level."))
        return level

    def clean_mapping(self):
        """The policy asked for; None: ``gold.policy.resolve_mapping`` chooses (the gold set's
        own, or the project's for live labels)."""
        text = self.cleaned_data["mapping"]
        if not text:
            return None
        try:
            return MappingPolicy.parse(text)
        except ValueError as error:
            raise forms.ValidationError(str(error)) from None
