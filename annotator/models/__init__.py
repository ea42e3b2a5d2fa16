"""Assay's data model: evidence is a span.

Every label is stored against a half-open character span [start, end) of a document's
text, whatever its granularity; a chunking is just another set of spans over the same
documents. Constraints live in the database, not only in forms.
"""

from .corpus import Chunk, Chunking, Document, Query
from .figures import ChunkingFigures, ProjectFigures
from .labels import (
    EvidenceSpan,
    Granularity,
    Judgment,
    JudgmentEvent,
    JudgmentHistory,
    JudgmentQuerySet,
    JudgmentTiming,
    KeptNote,
)
from .projects import (
    DEFAULT_GRADE_LABELS,
    DEFAULT_GRADE_LABELS_SHOWN,
    LabelRevision,
    Membership,
    Project,
    ProjectQuerySet,
    Role,
    SourceKind,
)
from .work import Assignment, AssignmentStatus, ImportJob, ImportStatus

__all__ = [
    "DEFAULT_GRADE_LABELS",
    "DEFAULT_GRADE_LABELS_SHOWN",
    "Assignment",
    "AssignmentStatus",
    "Chunk",
    "Chunking",
    "ChunkingFigures",
    "Document",
    "EvidenceSpan",
    "Granularity",
    "ImportJob",
    "ImportStatus",
    "Judgment",
    "JudgmentEvent",
    "JudgmentHistory",
    "JudgmentQuerySet",
    "JudgmentTiming",
    "KeptNote",
    "LabelRevision",
    "Membership",
    "Project",
    "ProjectFigures",
    "ProjectQuerySet",
    "Query",
    "Role",
    "SourceKind",
]
