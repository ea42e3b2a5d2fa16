"""The CI gate: does a run pass against a baseline? Its parameters (a form) and its rule.

``?baseline=<id>&measure=nDCG@10&max_drop=0.01[&alpha=0.05]``, several measure/max_drop
pairs allowed. A measure fails when its mean drops by more than its ``max_drop``, or
(with ``alpha``) when the run is worse and the paired randomization test's p is below
``alpha``; the run passes when no measure fails. The figures come from the one
comparison (``metrics.compared``), as on the comparison page and the API's compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django import forms
from django.utils.translation import gettext_lazy as _

from numerics.comparison import Comparison

from .access import MAX_ID


class GateForm(forms.Form):
    """The gate's parameters; every bad one is a 400 with the reason."""

    baseline = forms.IntegerField(min_value=1, max_value=MAX_ID)
    alpha = forms.CharField(required=False, max_length=40)

    def __init__(self, data, *, run_pk: int):
        super().__init__(data)
        self.run_pk = run_pk
        listed = getattr(data, "getlist", lambda key: [data[key]] if key in data else [])
        self.measures = [m.strip() for m in listed("measure") if m.strip()]
        self.drops = listed("max_drop")

    def clean_alpha(self) -> float | None:
        text = self.cleaned_data["alpha"].strip()
        if not text:
            return None
        alpha = _finite(text)
        if alpha is None or not 0 < alpha < 1:
            raise forms.ValidationError(_("alpha must be a number between 0 and 1."))
        return alpha

    def clean(self):
        data = super().clean()
        if not self.measures:
            raise forms.ValidationError(_("Name at least one measure."))
        if len(set(self.measures)) < len(self.measures):
            raise forms.ValidationError(_("Name each measure once."))
        drops = [_finite(d) for d in self.drops]
        if any(d is None or d < 0 for d in drops):
            raise forms.ValidationError(_("max_drop must be a finite number ≥ 0."))
        if drops and len(drops) != len(self.measures):
            raise forms.ValidationError(_("Give one max_drop per measure, or alpha."))
        if not drops and data.get("alpha") is None and "alpha" not in self.errors:
            raise forms.ValidationError(_("Give one max_drop per measure, or alpha."))
        if data.get("baseline") == self.run_pk:
            raise forms.ValidationError(_("The run and the baseline must differ."))
        data["max_drops"] = drops or [None] * len(self.measures)
        return data

    def message(self) -> str:
        """The form's errors as one line."""
        return " ".join(str(e) for errors in self.errors.values() for e in errors)


def _finite(text: str) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Check:
    """One measure of the gate: the figures, the limits and why it fails (if it does)."""

    measure: str
    run_mean: float
    baseline_mean: float
    delta: float
    delta_interval: tuple[float, float] | None
    p_randomization: float | None
    p_t: float | None
    max_drop: float | None
    alpha: float | None
    reasons: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.reasons


def check_json(check: Check, **extra) -> dict:
    """A check as the gates' JSON gives it (retrieval and answer runs alike); ``extra``
    fields follow the measure."""
    return {
        "measure": check.measure,
        **extra,
        "run_mean": check.run_mean,
        "baseline_mean": check.baseline_mean,
        "delta": check.delta,
        "delta_interval": list(check.delta_interval) if check.delta_interval else None,
        "p_randomization": check.p_randomization,
        "p_t": check.p_t,
        "max_drop": check.max_drop,
        "alpha": check.alpha,
        "pass": check.passed,
        "reasons": list(check.reasons),
    }


@dataclass(frozen=True)
class GateResult:
    checks: list[Check]

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    @property
    def failing(self) -> list[Check]:
        return [check for check in self.checks if not check.passed]


def gate(comparison: Comparison, max_drops: list[float | None], alpha: float | None) -> GateResult:
    """The gate's rule over a comparison of one run with the baseline (its measures in
    the order of ``max_drops``)."""
    checks = []
    for measure, limit in zip(comparison.measures, max_drops, strict=True):
        row = measure.rows[0]
        reasons = []
        if limit is not None and row.delta < -limit:
            reasons.append(f"{measure.name} dropped by {-row.delta:.4f} > {limit}")
        p = row.p_randomization
        if alpha is not None and row.delta < 0 and p is not None and p < alpha:
            reasons.append(f"{measure.name} is significantly worse (p = {p:.4g} < {alpha})")
        checks.append(
            Check(
                measure=measure.name,
                run_mean=row.mean,
                baseline_mean=measure.baseline_mean,
                delta=row.delta,
                delta_interval=row.interval,
                p_randomization=p,
                p_t=row.p_t,
                max_drop=limit,
                alpha=alpha,
                reasons=tuple(reasons),
            )
        )
    return GateResult(checks)
