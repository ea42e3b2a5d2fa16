"""Forms of the judge pages: configuring a judge, planning a job, choosing a calibration."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import Project
from annotator.problems import shown
from web.fields import WholeField

from .endpoints import URL_CREDENTIALS, has_credentials, key_name_problem
from .models import Judge, Scope
from .prompts import unknown_placeholders


class JudgeSettingsForm(forms.ModelForm):
    base_url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        label=_("Base URL (OpenAI-compatible)"),
        help_text=_("A public host, or one the server's operator allows."),
    )

    class Meta:
        model = Judge
        fields = [
            "slug",
            "name",
            "base_url",
            "model",
            "api_key_env",
            "prompt",
            "temperature",
            "max_tokens",
            "timeout_seconds",
            "concurrency",
            "rpm",
            "budget",
            "logprobs",
        ]
        labels = {
            "slug": _("Short name (in addresses)"),
            "name": _("Name"),
            "model": _("Model"),
            "api_key_env": _("Environment variable holding the API key (its name, not the key)"),
            "prompt": _("Prompt"),
            "temperature": _("Temperature"),
            "max_tokens": _("Maximum output tokens"),
            "timeout_seconds": _("Timeout (seconds)"),
            "concurrency": _("Concurrent calls"),
            "rpm": _("Requests per minute (0: no limit)"),
            "budget": _("Budget: maximum calls per job"),
            "logprobs": _("Log-probabilities"),
        }
        help_texts = {
            "api_key_env": _(
                "A variable named ASSAY_JUDGE_KEY_…, one the server's operator allows for this "
                "project."
            ),
            "rpm": "",  # the label says it
            "budget": "",
            "logprobs": _("Ask for token log-probabilities (unsure-first ordering)."),
        }
        widgets = {"prompt": forms.Textarea(attrs={"rows": 16, "spellcheck": "false"})}

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.project = project
        if self.instance.pk:
            del self.fields["slug"]

    def clean_api_key_env(self):
        value = self.cleaned_data["api_key_env"].strip()
        problem = key_name_problem(value)
        if problem is not None:
            raise forms.ValidationError(shown(problem))
        return value

    def clean_base_url(self):
        value = self.cleaned_data["base_url"]
        if has_credentials(value):
            raise forms.ValidationError(shown(URL_CREDENTIALS()))
        return value

    def clean(self):
        data = super().clean()
        for name in ("api_key_env", "base_url"):
            if self.has_error(name):
                # A refused value (a key pasted there, a URL with a password) is never
                # shown back.
                self.data = self.data.copy()
                self.data[self.add_prefix(name)] = ""
        return data

    def clean_prompt(self):
        prompt = self.cleaned_data["prompt"]
        unknown = unknown_placeholders(prompt)
        if unknown:
            raise forms.ValidationError(
                _("Unknown placeholders: %(names)s") % {"names": ", ".join(unknown)}
            )
        return prompt

    def clean_slug(self):
        slug = self.cleaned_data["slug"]
        if Judge.objects.filter(project=self.instance.project, slug=slug).exists():
            raise forms.ValidationError(_("This project already has a judge with that slug."))
        return slug


class JobForm(forms.Form):
    scope = forms.ChoiceField(
        choices=Scope.choices, initial=Scope.HOLES, required=False, label=_("Scope")
    )
    sample_size = WholeField(
        min_value=1, max_value=1_000_000, required=False, label=_("Sample size N")
    )
    level = forms.ChoiceField(
        choices=[("chunk", _("Chunk")), ("document", _("Document"))],
        required=False,
        label=_("Level"),
    )
    chunking = forms.ChoiceField(required=False, label=_("Chunking"))
    queries = forms.CharField(
        required=False, max_length=10_000, label=_("Only these query ids (space-separated)")
    )

    def __init__(self, *args, project: Project, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["chunking"].choices = [("", "—")] + [
            (name, name) for name in project.chunkings.values_list("name", flat=True)
        ]

    def clean(self):
        data = super().clean()
        data["scope"] = data.get("scope") or Scope.HOLES
        data["level"] = data.get("level") or "chunk"
        if data.get("scope") == Scope.SAMPLE and not data.get("sample_size"):
            self.add_error("sample_size", _("A sample needs its size N."))
        return data

    def plan_options(self) -> dict:
        data = self.cleaned_data
        return {
            "scope": data["scope"],
            "level": data["level"],
            "chunking": data["chunking"] or None if data["level"] == "chunk" else None,
            "qids": data["queries"].split() or None,
            "sample_size": data["sample_size"] if data["scope"] == Scope.SAMPLE else None,
        }


class CalibrationForm(forms.Form):
    """Two sides to compare: label sources (``people``, ``judge:x@2`` …) or usernames."""

    a = forms.CharField(required=False, max_length=2000)
    b = forms.CharField(required=False, max_length=2000)
    # A quality dimension's key: its grades of documents or sites instead of relevance.
    dimension = forms.SlugField(required=False, max_length=40)

    def values(self, choices: list[str]) -> dict:
        """The sides asked for, else people against the first judge (or assessors)."""
        data = self.cleaned_data
        judges = [c for c in choices if c.startswith("judge:") and "@" not in c]
        fallback = judges[0] if judges else ("assessors" if "assessors" in choices else None)
        return {"a": data["a"].strip() or "people", "b": data["b"].strip() or fallback}
