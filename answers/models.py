"""RAG answers and their judgements: answer runs, answers cut into sentences, citations
resolved to spans, the judgements people and LLM judges give (with append-only history),
adjudications, and the judgements a gold set froze.

Evidence is a span here too: every citation — of a document, a chunk or a passage — is
stored as ``[start, end)`` of a document's text, so it is measured against the gold
evidence like any label, under the project's mapping policy.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models import Chunk, Chunking, Document, Project, Query
from annotator.models.history import AppendOnlyHistory
from nuggets.models import Nugget


class AnswerRunQuerySet(models.QuerySet):
    def active(self) -> AnswerRunQuerySet:
        """Answer runs on dashboards and in comparisons: not archived."""
        return self.filter(archived_at__isnull=True)


class AnswerRun(models.Model):
    """One system's answers to the project's queries, imported from one file."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="answer_runs")
    name = models.CharField(max_length=200)
    # The file's own run id (TREC RAG ``run_id``), kept as written.
    run_tag = models.CharField(max_length=255, blank=True)
    shape = models.CharField(max_length=16)  # "trec_rag" or "simple"
    # The chunking whose chunk ids the file's references or citations name, if any.
    chunking = models.ForeignKey(
        Chunking, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    parameters = models.JSONField(default=dict, blank=True)
    tags = models.JSONField(default=list, blank=True)
    source = models.CharField(max_length=255, blank=True)
    n_answers = models.PositiveIntegerField(default=0)
    n_sentences = models.PositiveIntegerField(default=0)
    n_citations = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    archived_at = models.DateTimeField(null=True, blank=True)

    objects = AnswerRunQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="answer_run_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Answer(models.Model):
    """A run's answer to one query: its text, cut into sentences."""

    run = models.ForeignKey(AnswerRun, on_delete=models.CASCADE, related_name="answers")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="answers")
    text = models.TextField(blank=True)
    response_length = models.PositiveIntegerField(null=True, blank=True)
    # TREC RAG: the ids the citations index, as the file listed them.
    references = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["run_id", "query_id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "query"], name="answer_unique_query"),
        ]
        indexes = [models.Index(fields=["query", "run"], name="answer_query_run")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.query_id}"


class Sentence(models.Model):
    """Sentence ``number`` (from 1) of an answer: characters ``[start, end)`` of its text."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    number = models.PositiveIntegerField()
    text = models.TextField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()

    class Meta:
        ordering = ["answer_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "number"], name="sentence_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.answer_id}#{self.number}"


class CitationGranularity(models.TextChoices):
    DOCUMENT = "document", _("Document")
    CHUNK = "chunk", _("Chunk")
    PASSAGE = "passage", _("Passage")


class Citation(models.Model):
    """Citation ``number`` (from 1) of a sentence, resolved to a span of a document: a
    whole document, a chunk (``chunk`` while it exists) or a passage."""

    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="citations")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="citations")
    number = models.PositiveIntegerField()
    granularity = models.CharField(max_length=16, choices=CitationGranularity.choices)
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(Chunk, null=True, blank=True, on_delete=models.SET_NULL)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    # TREC RAG: the index into the answer's references the file cited.
    reference = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["sentence_id", "number"]
        constraints = [
            models.UniqueConstraint(fields=["sentence", "number"], name="citation_unique_number"),
            models.CheckConstraint(
                condition=Q(end__gte=models.F("start")), name="citation_span_ordered"
            ),
        ]
        indexes = [models.Index(fields=["answer"], name="citation_answer")]

    def __str__(self) -> str:
        return f"{self.sentence_id}[{self.number}] {self.document_id}[{self.start}:{self.end}]"


class Aspect(models.TextChoices):
    """What a judgement is about, each on its own scale (``numerics.answers``)."""

    NUGGET = "nugget", _("Nugget support")
    SUPPORT = "support", _("Citation support")
    NEEDS_CITATION = "needs_citation", _("Needs a citation")
    CRAG = "crag", _("Answer grade")


# The highest value of each aspect's scale (the lowest is 0).
TOP_VALUE = {Aspect.NUGGET: 2, Aspect.SUPPORT: 2, Aspect.NEEDS_CITATION: 1, Aspect.CRAG: 3}
# The target field each aspect is judged on (the whole answer for CRAG).
TARGET_FIELD = {
    Aspect.NUGGET: "nugget",
    Aspect.SUPPORT: "citation",
    Aspect.NEEDS_CITATION: "sentence",
    Aspect.CRAG: None,
}


def _target_constraints(prefix: str) -> list:
    """One target per aspect, its value on the aspect's scale."""
    checks = []
    for aspect, field in TARGET_FIELD.items():
        others = [f for f in ("nugget", "citation", "sentence") if f != field]
        condition = Q(aspect=aspect.value, value__gte=0, value__lte=TOP_VALUE[aspect])
        for other in others:
            condition &= Q(**{f"{other}__isnull": True})
        if field:
            condition &= Q(**{f"{field}__isnull": False})
        checks.append(condition)
    combined = checks[0]
    for check in checks[1:]:
        combined |= check
    return [models.CheckConstraint(condition=combined, name=f"{prefix}_target_and_value")]


def _unique_per_target(prefix: str, *by: str) -> list:
    rows = []
    for aspect, field in TARGET_FIELD.items():
        fields = ["answer", *by, "aspect", *([field] if field else [])]
        rows.append(
            models.UniqueConstraint(
                fields=fields, condition=Q(aspect=aspect.value), name=f"{prefix}_unique_{aspect}"
            )
        )
    return rows


class Target(models.Model):
    """What judgements, adjudications and their history share: an answer, an aspect and
    the aspect's target (a nugget, a citation, an uncited sentence, or the answer)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    aspect = models.CharField(max_length=16, choices=Aspect.choices)
    nugget = models.ForeignKey(
        Nugget, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    citation = models.ForeignKey(
        Citation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    sentence = models.ForeignKey(
        Sentence, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        abstract = True

    @property
    def target_id(self) -> int | None:
        field = TARGET_FIELD[Aspect(self.aspect)]
        return getattr(self, f"{field}_id") if field else None

    def target_fields(self) -> dict:
        return {
            "answer_id": self.answer_id,
            "aspect": self.aspect,
            "nugget_id": self.nugget_id,
            "citation_id": self.citation_id,
            "sentence_id": self.sentence_id,
        }


class AnswerJudgment(Target):
    """One annotator's judgement of one target of an answer (people and judge versions)."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="answer_judgments"
    )
    value = models.SmallIntegerField()
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            *_target_constraints("answer_judgment"),
            *_unique_per_target("answer_judgment", "annotator"),
        ]
        indexes = [models.Index(fields=["answer", "annotator"], name="answer_judgment_by")]

    def __str__(self) -> str:
        return f"{self.answer_id} {self.aspect}/{self.target_id} = {self.value}"


class JudgmentEvent(models.TextChoices):
    CREATE = "create", _("Created")
    UPDATE = "update", _("Changed")
    DELETE = "delete", _("Deleted")


class AnswerJudgmentHistory(AppendOnlyHistory):
    """Append-only log of every answer judgement change; rows are never changed."""

    history_name = "Answer judgment history"

    judgment = models.ForeignKey(
        AnswerJudgment, null=True, blank=True, on_delete=models.SET_NULL, related_name="history"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    aspect = models.CharField(max_length=16, choices=Aspect.choices)
    # The target while it exists, and the nugget's id as text (kept when it is deleted).
    nugget = models.ForeignKey(
        Nugget, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    nugget_key = models.CharField(max_length=255, blank=True)
    citation = models.ForeignKey(
        Citation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    sentence = models.ForeignKey(
        Sentence, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    event = models.CharField(max_length=8, choices=JudgmentEvent.choices)
    old_value = models.SmallIntegerField(null=True, blank=True)
    new_value = models.SmallIntegerField(null=True, blank=True)
    old_note = models.TextField(blank=True)
    new_note = models.TextField(blank=True)
    # The screen's id of the key press that made the change, found again by undo.
    action_id = models.CharField(max_length=40, blank=True, default="")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "answer judgment history"
        indexes = [models.Index(fields=["answer", "annotator"], name="answer_history_by")]

    def __str__(self) -> str:
        return f"{self.event} {self.aspect} {self.old_value}->{self.new_value}"


class AnswerAdjudication(Target):
    """A lead's final value of one disputed target, with a reason."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="adjudications")
    value = models.SmallIntegerField()
    reason = models.TextField(blank=True)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            *_target_constraints("answer_adjudication"),
            *_unique_per_target("answer_adjudication"),
        ]

    def __str__(self) -> str:
        return f"{self.answer_id} {self.aspect}/{self.target_id} := {self.value}"


class AnswerAdjudicationHistory(models.Model):
    """Append-only log of every adjudication of an answer judgement."""

    adjudication = models.ForeignKey(
        AnswerAdjudication, null=True, on_delete=models.SET_NULL, related_name="history"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    aspect = models.CharField(max_length=16, choices=Aspect.choices)
    target = models.PositiveBigIntegerField(null=True, blank=True)
    old_value = models.SmallIntegerField(null=True)
    new_value = models.SmallIntegerField(null=True)
    reason = models.TextField(blank=True)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.old_value}->{self.new_value} by {self.changed_by_id}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Adjudication history is append-only")
        super().save(*args, **kwargs)


class GoldAnswerJudgment(models.Model):
    """One frozen answer judgement: an annotator's value, or the adjudicated one. Nuggets
    are named by their id, as the gold set froze them."""

    gold_set = models.ForeignKey(
        "gold.GoldSet", on_delete=models.CASCADE, related_name="answer_judgments"
    )
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="+")
    aspect = models.CharField(max_length=16, choices=Aspect.choices)
    nugget_key = models.CharField(max_length=255, blank=True)
    citation = models.ForeignKey(
        Citation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    sentence = models.ForeignKey(
        Sentence, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    annotator = models.CharField(max_length=150, blank=True)  # empty: adjudicated
    adjudicated = models.BooleanField(default=False)
    value = models.SmallIntegerField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["gold_set", "answer"], name="gold_answer_judgment")]

    def __str__(self) -> str:
        return f"{self.gold_set_id}/{self.answer_id} {self.aspect} = {self.value}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("Frozen answer judgements are immutable")
        super().save(*args, **kwargs)
