"""Assay's data model: evidence is a span.

Every label is stored against a half-open character span [start, end) of a document's
text, whatever its granularity; a chunking is just another set of spans over the same
documents. Constraints live in the database, not only in forms.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from numerics.grades import GRADES
from numerics.mapping import MappingPolicy
from numerics.spans import Span, page_of, page_spans

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


class Granularity(models.TextChoices):
    CHUNK = "chunk", _("Chunk")
    PASSAGE = "passage", _("Passage")
    PAGE = "page", _("Page")
    DOCUMENT = "document", _("Document")


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
        return MappingPolicy.parse(self.mapping or "any_overlap")

    @property
    def grade_labels(self) -> list[tuple[int, str]]:
        return [(g, getattr(self, f"grade_label_{g}")) for g in GRADES]

    @property
    def shown_grade_labels(self) -> list[tuple[int, str]]:
        """(grade, label) for screens: default labels in the user's language."""
        return [
            (g, str(DEFAULT_GRADE_LABELS_SHOWN.get(label, label))) for g, label in self.grade_labels
        ]


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    # Pseudo-annotators (imported assessors, LLM judges) hold labels but never log in.
    is_pseudo = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique"),
            models.CheckConstraint(
                condition=Q(role__in=[r.value for r in Role]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


class Document(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    doc_id = models.CharField(max_length=255)
    title = models.CharField(max_length=1000, blank=True)
    text = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # Character offsets where each page starts; empty when the source has no pages.
    # Page i spans [page_starts[i], page_starts[i+1]) and the last page runs to len(text).
    page_starts = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "doc_id"], name="document_unique_id"),
        ]

    def __str__(self) -> str:
        return self.doc_id

    def page_spans(self) -> list[tuple[int, int]]:
        """Half-open (start, end) offsets of every page; one span for a page-less doc."""
        return page_spans(self.page_starts, len(self.text))

    def page_of(self, offset: int) -> int | None:
        """1-based page number holding ``offset``, or None when the doc has no pages."""
        return page_of(self.page_starts, offset)


class Chunking(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="chunkings")
    name = models.CharField(max_length=200)
    # Free-form: e.g. {"size": 256, "overlap": 32, "unit": "token"}.
    parameters = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="chunking_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Chunk(models.Model):
    chunking = models.ForeignKey(Chunking, on_delete=models.CASCADE, related_name="chunks")
    chunk_id = models.CharField(max_length=255)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["document_id", "start"]
        constraints = [
            models.UniqueConstraint(fields=["chunking", "chunk_id"], name="chunk_unique_id"),
            models.CheckConstraint(condition=Q(end__gt=models.F("start")), name="chunk_nonempty"),
        ]
        indexes = [models.Index(fields=["chunking", "document", "start"], name="chunk_doc_start")]

    def __str__(self) -> str:
        return self.chunk_id

    @property
    def text(self) -> str:
        return self.document.text[self.start : self.end]


class Query(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queries")
    qid = models.CharField(max_length=255)
    text = models.TextField()
    reference_answer = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "queries"
        constraints = [models.UniqueConstraint(fields=["project", "qid"], name="query_unique_qid")]

    def __str__(self) -> str:
        return self.qid


class EvidenceSpan(models.Model):
    """The fields every kind of label shares: a granularity and a span of one document.

    Judgments, their history, adjudications, their history and frozen gold labels all
    say "this grade for characters [start, end) of this document, at this granularity".
    """

    granularity = models.CharField(max_length=16, choices=Granularity.choices)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        abstract = True

    @property
    def span(self) -> Span:
        return Span(self.document_id, self.start, self.end)

    def span_fields(self) -> dict:
        """The shared fields as keyword arguments, to copy this span into another label."""
        return {
            "granularity": self.granularity,
            "document_id": self.document_id,
            "start": self.start,
            "end": self.end,
        }


class JudgmentQuerySet(models.QuerySet):
    def in_project(self, project: Project) -> JudgmentQuerySet:
        return self.filter(query__project=project)

    def of(self, query: Query, annotator) -> JudgmentQuerySet:
        """One annotator's labels on one query."""
        return self.filter(query=query, annotator=annotator)

    def by_people(self, project: Project) -> JudgmentQuerySet:
        """Labels of people who log in (not of pseudo-annotators such as imported assessors)."""
        pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
        return self.exclude(annotator_id__in=pseudo)

    def visible_to(self, membership: Membership) -> JudgmentQuerySet:
        """Blind labelling: owners and adjudicators see every label, others their own only."""
        labels = self.in_project(membership.project_id)
        if membership.role in (Role.OWNER, Role.ADJUDICATOR):
            return labels
        return labels.filter(annotator_id=membership.user_id)


class Judgment(EvidenceSpan):
    """One annotator's grade for one evidence span of one query."""

    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments"
    )
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="judgments")
    chunk = models.ForeignKey(
        Chunk, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    grade = models.SmallIntegerField()
    note = models.TextField(blank=True)
    # Whether a judge's suggestion was on screen when this grade was given (post-editing).
    suggestion_shown = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(grade__gte=0, grade__lte=3), name="judgment_grade_0_3"
            ),
            models.CheckConstraint(
                condition=Q(end__gte=models.F("start")), name="judgment_span_ordered"
            ),
            models.CheckConstraint(
                condition=Q(granularity__in=[g.value for g in Granularity]),
                name="judgment_granularity_valid",
            ),
            models.CheckConstraint(
                condition=(Q(granularity="chunk") & Q(chunk__isnull=False))
                | (~Q(granularity="chunk") & Q(chunk__isnull=True)),
                name="judgment_chunk_iff_chunk_level",
            ),
            # One label per annotator per evidence unit.
            models.UniqueConstraint(
                fields=["query", "annotator", "chunk"],
                condition=Q(granularity="chunk"),
                name="judgment_unique_chunk",
            ),
            models.UniqueConstraint(
                fields=["query", "annotator", "granularity", "document", "start", "end"],
                condition=~Q(granularity="chunk"),
                name="judgment_unique_span",
            ),
        ]
        indexes = [
            models.Index(fields=["query", "annotator"], name="judgment_query_annotator"),
            models.Index(fields=["document", "start"], name="judgment_doc_start"),
        ]

    def __str__(self) -> str:
        return f"{self.query.qid}/{self.document.doc_id}[{self.start}:{self.end}]={self.grade}"


class JudgmentEvent(models.TextChoices):
    CREATE = "create", _("Created")
    UPDATE = "update", _("Changed")
    DELETE = "delete", _("Deleted")


class JudgmentHistory(EvidenceSpan):
    """Append-only log of every label change; rows are never updated nor deleted."""

    judgment = models.ForeignKey(
        Judgment, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="judgment_history")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    event = models.CharField(max_length=8, choices=JudgmentEvent.choices)
    chunk_id = models.CharField(max_length=255, blank=True)
    old_grade = models.SmallIntegerField(null=True, blank=True)
    new_grade = models.SmallIntegerField(null=True, blank=True)
    old_note = models.TextField(blank=True)
    new_note = models.TextField(blank=True)
    suggestion_shown = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "judgment history"
        indexes = [models.Index(fields=["query", "annotator"], name="history_query_annotator")]

    def __str__(self) -> str:
        return f"{self.event} {self.old_grade}->{self.new_grade} by {self.changed_by_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Judgment history is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("Judgment history is append-only")


class ImportStatus(models.TextChoices):
    PENDING = "pending", _("Waiting")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class ImportJob(models.Model):
    """A file import, run in the background for the web upload page, with progress."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=32)
    options = models.JSONField(default=dict, blank=True)
    filename = models.CharField(max_length=255)
    path = models.CharField(max_length=1000, blank=True)
    size = models.PositiveBigIntegerField(default=0)
    processed_bytes = models.PositiveBigIntegerField(default=0)
    status = models.CharField(
        max_length=16, choices=ImportStatus.choices, default=ImportStatus.PENDING
    )
    created_count = models.PositiveIntegerField(default=0)
    # What the import says about itself when done (e.g. lines dropped under keep-known).
    detail = models.CharField(max_length=500, blank=True, default="")
    errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} import of {self.filename} ({self.status})"

    @property
    def percent(self) -> int:
        if self.status == ImportStatus.DONE:
            return 100
        if not self.size:
            return 0
        return min(99, int(100 * self.processed_bytes / self.size))


class AssignmentStatus(models.TextChoices):
    OPEN = "open", _("To do")
    DONE = "done", _("Done")
    SKIPPED = "skipped", _("Skipped")


class Assignment(models.Model):
    """One query in one annotator's queue, with its progress and the time spent on it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="assignments")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(
        max_length=16, choices=AssignmentStatus.choices, default=AssignmentStatus.OPEN
    )
    skip_reason = models.TextField(blank=True)
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    assigned_at = models.DateTimeField(auto_now_add=True)
    # Active time on the labelling screens of this query, measured by the browser.
    time_spent_seconds = models.FloatField(default=0)
    opened_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Candidates left unjudged when the annotator confirmed "done" anyway.
    unjudged_at_done = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["query_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["query", "annotator"], name="assignment_unique"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in AssignmentStatus]),
                name="assignment_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(time_spent_seconds__gte=0), name="assignment_time_nonnegative"
            ),
        ]
        indexes = [
            models.Index(
                fields=["project", "annotator", "status", "query"], name="assignment_queue"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.query_id} → {self.annotator_id} ({self.status})"


class JudgmentTiming(models.Model):
    """Seconds the annotator spent before one label change; the rest is on its history row."""

    history = models.OneToOneField(JudgmentHistory, on_delete=models.CASCADE, related_name="timing")
    seconds = models.FloatField()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(seconds__gte=0), name="timing_nonnegative"),
        ]

    def __str__(self) -> str:
        return f"{self.seconds:.1f}s for history {self.history_id}"
