"""Defining a project's quality dimensions and its gain rule."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import router, transaction
from django.db.models import ProtectedError
from django.db.models.deletion import Collector

from annotator.models import Project
from annotator.revisions import bump
from numerics.gain import GainRule

from .models import SOURCE_QUALITY, GainSetting, QualityDimension, QualityGrade, QualityUnit


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


def edit_dimension(
    dimension: QualityDimension, *, name: str, name_zh: str, labels: list, labels_zh: list
) -> None:
    """New names and grade labels for a dimension (its key, scale, unit and grades stay)."""
    with transaction.atomic():
        bump(dimension.project_id)
        dimension.name, dimension.name_zh = name, name_zh
        dimension.labels, dimension.labels_zh = labels, labels_zh
        dimension.save(update_fields=["name", "name_zh", "labels", "labels_zh"])


@dataclass(frozen=True)
class DimensionUse:
    """What holds a dimension: rows that its deletion would remove (grades, their
    history, final grades …, by model label such as ``quality.QualityGrade``) and whether
    the project's gain rule names it."""

    rows: dict[str, int]
    in_gain_rule: bool

    @property
    def free(self) -> bool:
        return not self.rows and not self.in_gain_rule

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def grades(self) -> int:
        return self.rows.get(QualityGrade._meta.label, 0)


def dimension_use(dimension: QualityDimension) -> DimensionUse:
    """Every row that deleting ``dimension`` would take with it, whatever app holds it
    (Django's deletion collector: grades, history, adjudications, a judge's setting …)."""
    collector = Collector(using=router.db_for_write(QualityDimension))
    rows: dict[str, int] = {}
    try:
        collector.collect([dimension])
    except ProtectedError as error:
        for obj in error.protected_objects:
            name = obj._meta.label
            rows[name] = rows.get(name, 0) + 1
    for model, objects in collector.data.items():
        if model is not QualityDimension and objects:
            name = model._meta.label
            rows[name] = rows.get(name, 0) + len(objects)
    for queryset in collector.fast_deletes:
        count = queryset.count()
        if count:
            name = queryset.model._meta.label
            rows[name] = rows.get(name, 0) + count
    rule = project_gain_rule(dimension.project)
    return DimensionUse(
        rows=rows, in_gain_rule=not rule.is_none and rule.dimension == dimension.key
    )


class DimensionInUse(ValueError):
    """A dimension that holds grades, their history or anything else, or that the gain
    rule names: deleting it would lose them, so it is refused (``use`` says what holds it)."""

    def __init__(self, use: DimensionUse):
        super().__init__("the dimension is in use")
        self.use = use


def delete_dimension(dimension: QualityDimension) -> None:
    """Delete a dimension nobody ever graded (no grade, no history row, nothing else
    pointing at it) and that the gain rule does not name; ``DimensionInUse`` otherwise,
    with nothing deleted. Grades are never lost with their dimension: a graded dimension
    stays (rename it, or stop using it in the gain rule)."""
    with transaction.atomic():
        bump(dimension.project_id)  # first: the project's writers queue here
        locked = QualityDimension.objects.select_for_update().get(pk=dimension.pk)
        use = dimension_use(locked)
        if not use.free:
            raise DimensionInUse(use)
        locked.delete()
