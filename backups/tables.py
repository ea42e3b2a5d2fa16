"""What a project backup holds: every table that belongs to a project, in the order
rows can be created, with the path from each row to its project.

A model that points at one of these tables must be listed here or in ``LEFT_OUT`` with
the reason (tests/test_backups.py checks it), so a new table cannot be forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Model


@dataclass(frozen=True)
class Table:
    label: str  # app_label.ModelName
    to_project: str  # the lookup from a row to its project's pk

    @property
    def model(self) -> type[Model]:
        return apps.get_model(self.label)

    def rows(self, project):
        return self.model.objects.filter(**{self.to_project: project.pk}).order_by("pk")


TABLES = (
    Table("annotator.Project", "pk"),
    Table("annotator.Membership", "project"),
    Table("annotator.Document", "project"),
    Table("annotator.Chunking", "project"),
    Table("annotator.Chunk", "chunking__project"),
    Table("annotator.Query", "project"),
    Table("annotator.Judgment", "query__project"),
    Table("annotator.JudgmentHistory", "query__project"),
    Table("annotator.JudgmentTiming", "history__query__project"),
    Table("annotator.Assignment", "project"),
    Table("annotator.KeptNote", "query__project"),
    Table("quality.QualityDimension", "project"),
    Table("quality.QualityGrade", "dimension__project"),
    Table("quality.QualityHistory", "dimension__project"),
    Table("quality.QualityAdjudication", "dimension__project"),
    Table("quality.QualityAdjudicationHistory", "dimension__project"),
    Table("quality.GainSetting", "project"),
    Table("gold.Adjudication", "query__project"),
    Table("gold.AdjudicationHistory", "query__project"),
    Table("gold.GoldSet", "project"),
    Table("gold.GoldLabel", "gold_set__project"),
    Table("metrics.Run", "project"),
    Table("judges.Judge", "project"),
    Table("judges.JudgeVersion", "judge__project"),
    Table("judges.JudgeJob", "version__judge__project"),
    Table("judges.JudgePair", "job__version__judge__project"),
    Table("judges.QualityPrompt", "dimension__project"),
    Table("nuggets.NuggetSetting", "project"),
    Table("nuggets.Nugget", "query__project"),
    Table("nuggets.NuggetEvidence", "nugget__query__project"),
    Table("nuggets.NuggetHistory", "query__project"),
    Table("nuggets.GoldNugget", "gold_set__project"),
    Table("nuggets.NuggetProposal", "query__project"),
    Table("answers.AnswerRun", "project"),
    Table("answers.Answer", "run__project"),
    Table("answers.Sentence", "answer__run__project"),
    Table("answers.Citation", "answer__run__project"),
    Table("answers.AnswerJudgment", "answer__run__project"),
    Table("answers.AnswerJudgmentHistory", "answer__run__project"),
    Table("answers.AnswerAdjudication", "answer__run__project"),
    Table("answers.AnswerAdjudicationHistory", "answer__run__project"),
    Table("answers.GoldAnswerJudgment", "gold_set__project"),
)

LEFT_OUT = {
    "annotator.LabelRevision": "derived: a restored project's revision starts anew (a reset)",
    "annotator.ImportJob": "an upload in progress, not project data; its file is deleted when done",
    "annotator.ProjectFigures": "counts the database keeps from the rows themselves",
    "annotator.ChunkingFigures": "counts the database keeps from the rows themselves",
    "metrics.MeasureChoice": "a user's choice of dashboard measures, a display preference",
}
