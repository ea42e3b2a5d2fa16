"""LLM judges of a project, their prompt versions, judging jobs and each pair's outcome.

A judge's answers depend on its prompt, model, temperature and output limit: those make a
``JudgeVersion``, and each version labels as its own pseudo-annotator, so every label
records the judge version it came from. The API key is never stored: only the *name* of
the environment variable that holds it.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import Chunk, Chunking, Document, Judgment, Project, Query
from annotator.problems import ProblemField
from operations.models import Leased
from quality.models import MAX_SCALE, QualityDimension

# The range of every judge setting, one source for the web form, add_judge, the model's
# validation and the worker (which clamps any stored value into it): a job holds a worker
# only so long and calls no more than this. The README lists them.
LIMITS = {
    "temperature": (0.0, 2.0),
    "max_tokens": (1, 32_768),
    "timeout_seconds": (0.1, 300.0),
    "concurrency": (1, 16),
    "rpm": (0, 10_000),
    "budget": (1, 100_000),
}


def within(name: str):
    low, high = LIMITS[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


def bounded(name: str, value):
    """``value`` clamped into the setting's range (for values stored before the limits)."""
    low, high = LIMITS[name]
    return min(max(value, low), high)


class Judge(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="judges")
    slug = models.SlugField(max_length=40)
    name = models.CharField(max_length=200)
    base_url = models.URLField(max_length=500)
    model = models.CharField(max_length=200)
    # The NAME of the environment variable holding the key, never the key itself.
    api_key_env = models.CharField(max_length=100)
    # Configured by the server's operator (``add_judge``): it may name any host, and any
    # ASSAY_JUDGE_KEY_* variable without the project being listed for it (judges.endpoints).
    configured_by_operator = models.BooleanField(default=False, editable=False)
    prompt = models.TextField()
    temperature = models.FloatField(default=0.0, validators=within("temperature"))
    max_tokens = models.PositiveIntegerField(default=200, validators=within("max_tokens"))
    timeout_seconds = models.FloatField(default=60.0, validators=within("timeout_seconds"))
    concurrency = models.PositiveSmallIntegerField(default=4, validators=within("concurrency"))
    rpm = models.PositiveIntegerField(
        default=60, help_text="Requests per minute (0: no limit).", validators=within("rpm")
    )
    budget = models.PositiveIntegerField(
        default=1000, help_text="Maximum calls per job.", validators=within("budget")
    )
    logprobs = models.BooleanField(
        default=False, help_text="Ask for token log-probabilities (unsure-first ordering)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="judge_unique_slug"),
            models.CheckConstraint(
                condition=Q(temperature__gte=0, temperature__lte=2), name="judge_temperature"
            ),
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="judge_concurrency"),
            models.CheckConstraint(condition=Q(budget__gte=1), name="judge_budget"),
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="judge_timeout"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def current(self) -> JudgeVersion | None:
        return self.versions.order_by("-number").first()


class JudgeVersion(models.Model):
    """What shapes a judge's answers, frozen; labels are written by ``annotator``."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    prompt = models.TextField()
    model = models.CharField(max_length=200)
    temperature = models.FloatField()
    max_tokens = models.PositiveIntegerField()
    annotator = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judge_version"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge", "number"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "number"], name="judge_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.name} v{self.number}"


class JobStatus(models.TextChoices):
    PENDING = "pending", _("Waiting")
    RUNNING = "running", _("Running")
    PAUSED = "paused", _("Paused")
    DONE = "done", _("Done")
    CANCELLED = "cancelled", _("Cancelled")
    FAILED = "failed", _("Failed")


class Scope(models.TextChoices):
    HOLES = "holes", _("Holes: pooled candidates no person has judged")
    POOL = "pool", _("The whole pool")
    SAMPLE = "sample", _("A random sample of the pool")
    ALL = "all", _("The pool and everything people judged")


class JobKind(models.TextChoices):
    LABELS = "labels", _("Labels")
    NUGGETS = "nuggets", _("Nugget proposals")
    ANSWERS = "answers", _("Answer judgements")
    QUALITY = "quality", _("Quality grades")


class JudgeJob(Leased):
    """A job of a judge version: labels for (query, unit) pairs, or — ``kind`` nuggets —
    nugget proposals for queries (one pair per query, without a unit), or — ``kind``
    answers — judgements of RAG answers (one pair per answer for its nuggets, one per
    citation for its support), run by the same worker with the same budget, counters,
    failures, cancelling and resuming. The app that writes a kind's results runs it
    (``engine.register_runner``)."""

    version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=8, choices=JobKind.choices, default=JobKind.LABELS)
    # Nugget jobs: at most this many nuggets asked for per query.
    max_nuggets = models.PositiveSmallIntegerField(null=True, blank=True)
    # Quality jobs: the dimension graded (one pair per document or site, without a query)
    # and the prompt template the job sends, as it was when the job started.
    dimension = models.ForeignKey(
        QualityDimension, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    prompt = models.TextField(blank=True)
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.HOLES)
    sample_size = models.PositiveIntegerField(null=True, blank=True)
    qids = models.JSONField(default=list, blank=True)
    level = models.CharField(max_length=8, default="chunk")  # chunk | document
    chunking = models.ForeignKey(Chunking, null=True, blank=True, on_delete=models.CASCADE)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    cancel_requested = models.BooleanField(default=False)
    pause_requested = models.BooleanField(default=False)
    budget = models.PositiveIntegerField()
    n_pairs = models.PositiveIntegerField(default=0)
    calls = models.PositiveIntegerField(default=0)
    retries = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    # Why the job stopped early, as a problem (a code and its values), or None.
    error = ProblemField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.version} job {self.pk} ({self.status})"

    @property
    def active(self) -> bool:
        return self.status in (JobStatus.PENDING, JobStatus.RUNNING)

    @property
    def worker_gone(self) -> bool:
        """Running, but its worker stopped renewing the lease (died or lost): the next
        free worker takes it over; pause, resume and cancel act on it at once."""
        return self.status == JobStatus.RUNNING and not self.lease_alive


class PairStatus(models.TextChoices):
    PENDING = "pending", _("Waiting")
    JUDGED = "judged", _("Judged")
    SKIPPED = "skipped", _("Already judged by this version")
    FAILED = "failed", _("Failed")


class Failure(models.TextChoices):
    MALFORMED = "malformed", _("Malformed answer")
    EMPTY = "empty", _("Empty answer")
    TOO_LONG = "too_long", _("Answer too long")
    REFUSAL = "refusal", _("Refusal")
    TIMEOUT = "timeout", _("Timeout")
    RATE_LIMITED = "rate_limited", _("Rate limited")
    SERVER_ERROR = "server_error", _("Server error")
    UNREACHABLE = "unreachable", _("Endpoint unreachable")
    AUTH = "auth", _("API key refused")
    NOT_FOUND = "not_found", _("Unknown model or endpoint")
    BAD_REQUEST = "bad_request", _("Request refused")
    NO_KEY = "no_key", _("API key not available")
    BUDGET = "budget", _("Budget reached")
    # A judge configured on the web: any failure of the endpoint (judges.client).
    ENDPOINT = "endpoint", _("No OpenAI-compatible answer")
    NO_EVIDENCE = "no_evidence", _("No relevant evidence to send")
    # An answers job: the answer, citation or nuggets asked about were removed since.
    GONE = "gone", _("Nothing left to judge")


class JudgePair(models.Model):
    """One (query, unit) of a job — in a nugget job, one query without a unit; in an
    answers job, one answer (its nuggets) or one of its citations (its support); in a
    quality job, one document or site without a query — and how it ended: judged (a grade,
    the query's proposals or the answer's judgements written), or failed."""

    job = models.ForeignKey(JudgeJob, on_delete=models.CASCADE, related_name="pairs")
    query = models.ForeignKey(
        Query, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    document = models.ForeignKey(
        Document, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    site = models.CharField(max_length=255, blank=True)  # quality jobs graded per site
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.CASCADE)
    # Answers jobs: the answer judged and, for its support, the citation — ids of the
    # answers app's rows (judges sit below it and never name its models); a pair whose
    # answer is gone fails when its turn comes.
    answer = models.PositiveBigIntegerField(null=True, blank=True)
    citation = models.PositiveBigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=PairStatus.choices, default=PairStatus.PENDING)
    grade = models.SmallIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    confidence = models.FloatField(null=True, blank=True)
    failure = models.CharField(max_length=16, choices=Failure.choices, blank=True)
    # Why the pair failed, beyond ``failure``: a problem (a code and its values), or None.
    detail = ProblemField(null=True, blank=True)
    # What the model answered when its answer could not be read (first 2 KB).
    raw_reply = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    judgment = models.ForeignKey(
        Judgment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "query", "document", "chunk"], name="judge_pair_unique"
            ),
            models.UniqueConstraint(
                fields=["job", "answer"],
                condition=Q(answer__isnull=False, citation__isnull=True),
                name="judge_pair_unique_answer",
            ),
            models.UniqueConstraint(
                fields=["job", "citation"],
                condition=Q(citation__isnull=False),
                name="judge_pair_unique_citation",
            ),
            models.CheckConstraint(
                condition=Q(citation__isnull=True) | Q(answer__isnull=False),
                name="judge_pair_citation_of_answer",
            ),
            # Relevance grades are 0-3 (``numerics.grades``); a quality dimension's scale
            # may reach MAX_SCALE.
            models.CheckConstraint(
                condition=Q(grade__isnull=True) | Q(grade__gte=0, grade__lte=MAX_SCALE),
                name="judge_pair_grade_scale",
            ),
        ]
        indexes = [models.Index(fields=["job", "status"], name="judge_pair_job_status")]

    def __str__(self) -> str:
        if self.answer is not None:
            return f"{self.query_id}/answer {self.answer}/{self.citation}: {self.status}"
        return f"{self.query_id}/{self.document_id}/{self.chunk_id}: {self.status}"


class QualityPrompt(models.Model):
    """A quality dimension's own prompt for LLM judges (none: ``prompts.QUALITY_PROMPT``).
    Each quality job keeps the prompt it sent (``JudgeJob.prompt``)."""

    dimension = models.OneToOneField(
        QualityDimension, on_delete=models.CASCADE, related_name="judge_prompt"
    )
    prompt = models.TextField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.dimension_id}: prompt"
