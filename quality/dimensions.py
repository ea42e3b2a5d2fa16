"""Defining a project's quality dimensions and its gain rule."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Project
from annotator.revisions import bump
from numerics.gain import GainRule

from .models import SOURCE_QUALITY, GainSetting, QualityDimension, QualityUnit


def offer_source_quality(
    project: Project, *, unit: str = QualityUnit.SITE, site_field: str = "site", host=False
) -> QualityDimension:
    """The default dimension: "source quality" 0–3 (unreliable, weak, solid,
    authoritative), per site (a metadata field, or the host of a URL field) or per
    document; the existing one when the project has it."""
    found = QualityDimension.objects.filter(project=project, key=SOURCE_QUALITY["key"]).first()
    if found is not None:
        return found
    return QualityDimension.objects.create(
        project=project,
        **SOURCE_QUALITY,
        max_grade=3,
        unit=unit,
        site_field=site_field if unit == QualityUnit.SITE else "",
        site_host=host,
    )


def project_gain_rule(project: Project) -> GainRule:
    """The project's gain rule (``none`` until an owner chooses one)."""
    found = GainSetting.objects.filter(project=project).values_list("rule", flat=True).first()
    return GainRule.parse(found or "none")


def check_gain_rule(project: Project, rule: GainRule) -> GainRule:
    """``rule`` if it names one of the project's dimensions on its scale; else
    ``ValueError`` saying why."""
    if rule.is_none:
        return rule
    dimension = QualityDimension.objects.filter(project=project, key=rule.dimension).first()
    if dimension is None:
        raise ValueError(f"this project has no quality dimension {rule.dimension}")
    rule.check_scale(dimension.max_grade)
    return rule


def set_gain_rule(project: Project, rule: GainRule) -> None:
    """Make ``rule`` the project's (checked); live numbers follow it from now on."""
    check_gain_rule(project, rule)
    with transaction.atomic():
        bump(project.pk)
        GainSetting.objects.update_or_create(project=project, defaults={"rule": str(rule)})


def add_dimension(project: Project, **fields) -> QualityDimension:
    """A new quality dimension of ``project`` (fields checked by ``quality.forms``)."""
    return QualityDimension.objects.create(project=project, **fields)


def change_site_field(dimension: QualityDimension, site_field: str, host: bool) -> None:
    """Another site field for a per-site dimension (its sites change, so do the gains)."""
    with transaction.atomic():
        bump(dimension.project_id)
        dimension.site_field, dimension.site_host = site_field, host
        dimension.save(update_fields=["site_field", "site_host"])
