"""Projects and who works on them: roles, grade labels, memberships."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from numerics.grades import GRADES
from numerics.mapping import MappingPolicy

DEFAULT_GRADE_LABELS = {
    0: "Not relevant",
    1: "Related, does not answer",
    2: "Partially answers",
    3: "Fully answers",
}
# The default labels in the user's language; a label the owner changed is shown as written.
DEFAULT_GRADE_LABELS_SHOWN = {
    DEFAULT_GRADE_LABELS[0]: _("Not relevant"),
    DEFAULT_GRADE_LABELS[1]: _("Related, does not answer"),
    DEFAULT_GRADE_LABELS[2]: _("Partially answers"),
    DEFAULT_GRADE_LABELS[3]: _("Fully answers"),
}


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    ADJUDICATOR = "adjudicator", _("Adjudicator")
    ANNOTATOR = "annotator", _("Annotator")
    VIEWER = "viewer", _("Viewer")


class ProjectQuerySet(models.QuerySet):
    def for_user(self, user) -> ProjectQuerySet:
        """Projects the user is a member of (any role)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__user=user).distinct()


class Project(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    guidelines = models.TextField(blank=True)
    grade_label_0 = models.CharField(max_length=80, default=DEFAULT_GRADE_LABELS[0])
    grade_label_1 = models.CharField(max_length=80, default=DEFAULT_GRADE_LABELS[1])
    grade_label_2 = models.CharField(max_length=80, default=DEFAULT_GRADE_LABELS[2])
    grade_label_3 = models.CharField(max_length=80, default=DEFAULT_GRADE_LABELS[3])
    relevance_threshold = models.PositiveSmallIntegerField(
        default=1, help_text="Lowest grade that counts as relevant for binary measures."
    )
    pool_depth = models.PositiveIntegerField(
        default=10, help_text="Top-k of every run pooled into the candidates to judge."
    )
    # Post-edit mode: annotators see an LLM judge's grade and reason as a suggestion.
    post_edit = models.BooleanField(
        default=False,
        help_text="Show annotators an LLM judge's grade and reason as a suggestion (off: blind).",
    )
    candidate_overlap = models.FloatField(
        default=0.5,
        help_text=(
            "Candidates sharing more than this share of the shorter one's text (or lying "
            "inside another) are shown as one card."
        ),
    )
    short_passage = models.PositiveIntegerField(
        default=3,
        help_text=(
            "A passage shorter than this many characters is saved only after the annotator "
            "confirms it (a mis-drag selects one or two); 0 never asks."
        ),
    )
    mapping = models.CharField(
        max_length=40,
        default="any_overlap",
        help_text=(
            "How a label reaches the candidates it covers: any_overlap, contains, "
            "evidence_overlap>=θ or chunk_overlap>=θ."
        ),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(relevance_threshold__gte=1, relevance_threshold__lte=3),
                name="project_threshold_1_3",
            ),
            models.CheckConstraint(condition=Q(pool_depth__gte=1), name="project_pool_depth_pos"),
            models.CheckConstraint(
                condition=Q(candidate_overlap__gt=0, candidate_overlap__lte=1),
                name="project_candidate_overlap_share",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def mapping_policy(self) -> MappingPolicy:
        """The project's mapping policy: how labels reach units wherever live labels are
        mapped (labelling screen, agreement, adjudication, dashboards, freezing)."""
        return MappingPolicy.parse(self.mapping) if self.mapping else MappingPolicy()

    @property
    def grade_labels(self) -> list[tuple[int, str]]:
        return [(g, getattr(self, f"grade_label_{g}")) for g in GRADES]

    @property
    def shown_grade_labels(self) -> list[tuple[int, str]]:
        """(grade, label) for screens: default labels in the user's language."""
        return [
            (g, str(DEFAULT_GRADE_LABELS_SHOWN.get(label, label))) for g, label in self.grade_labels
        ]


class LabelRevision(models.Model):
    """A project's label revision (``annotator.revisions``): moves with every change to
    its labels, adjudications and gold sets, in the same transaction; caches of what
    labels derive are keyed by it. ``reset`` is the latest revision the history rows do
    not explain (labels deleted by cascade, a restored backup): caches read everything
    again past it. A row of its own, so that label writers never rewrite the project's."""

    project = models.OneToOneField(
        Project, primary_key=True, on_delete=models.CASCADE, related_name="label_revision"
    )
    number = models.PositiveBigIntegerField(default=0)
    reset = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"revision {self.number} (reset {self.reset})"


class SourceKind(models.TextChoices):
    """Whose labels a member's are (``annotator.sources``): a person who logs in, an
    imported assessor set or one version of an LLM judge."""

    PERSON = "person", _("Person")
    ASSESSORS = "assessors", _("Imported assessors")
    JUDGE = "judge", _("LLM judge version")


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    # Pseudo-annotators (imported assessors, LLM judges) hold labels but never log in.
    is_pseudo = models.BooleanField(default=False)
    # The label source of a member's labels; a judge version's pseudo-annotator also
    # records its judge's slug and version number (set when the version is created), so
    # the sources resolver knows them without the judges app.
    source = models.CharField(max_length=16, choices=SourceKind.choices, default=SourceKind.PERSON)
    judge_slug = models.CharField(max_length=40, blank=True)
    judge_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique"),
            models.CheckConstraint(
                condition=Q(role__in=[r.value for r in Role]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"

    def save(self, *args, **kwargs):
        # A pseudo-annotator created without a kind is an imported assessor set.
        if self.is_pseudo and self.source == SourceKind.PERSON:
            self.source = SourceKind.ASSESSORS
        super().save(*args, **kwargs)
