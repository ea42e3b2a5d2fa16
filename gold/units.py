"""Labels → one grade per (query, unit) for any unit level, live or from a frozen gold set.

This is the one path from labels to evaluation units, used by gold-set exports, the
agreement page and the metric dashboards:

1. every label (any granularity) is a span; ``numerics.mapping`` maps it onto the units of
   the chosen level (a chunking's chunks, pages, or whole documents) under a mapping
   policy;
2. each annotator's grade of a unit is the max over their labels that qualify for it
   (a unit touched only by grade-0 evidence is judged non-relevant);
3. the annotators' grades of a unit become one under the consensus policy, an
   adjudicated grade replacing the rule's result. An adjudication is given on one unit
   (a chunk, a page, a document) and settles exactly the units with that same span: it
   is not mapped onto neighbours, since a lead who resolved one chunk said nothing about
   the overlapping chunk beside it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models.functions import Length
from django.utils.translation import gettext_lazy as _

from annotator.caches import cache
from annotator.models import Chunk, Chunking, ChunkingFigures, Judgment, Project, ProjectFigures
from annotator.revisions import revision
from annotator.sources import Sources, resolve_sources
from numerics.consensus import NO_CONSENSUS, consensus_grades
from numerics.id_order import byte_order_codes
from numerics.mapping import MappingPolicy, best_evidence, map_pairs
from numerics.spans import SpanArrays

from .kept_units import KeptIds, kept_units
from .models import Adjudication, GoldSet
from .policy import ConsensusPolicy, resolve_mapping

DOCUMENTS = "documents"
PAGES = "pages"
# How the two built-in levels are named on screens; a chunking is named by its name.
LEVEL_LABELS = {DOCUMENTS: _("documents"), PAGES: _("pages")}


def level_name(level: str) -> str:
    """A level as screens name it: documents and pages translated, a chunking by its name."""
    return str(LEVEL_LABELS.get(level, level))


@dataclass(frozen=True)
class Units:
    """The evaluation units of one level: ids (as runs name them) and their spans."""

    level: str
    ids: np.ndarray  # object array of str (or a units file's ``KeptIds``, which acts as one)
    pk: np.ndarray  # chunk pk, or document pk for documents/pages
    document: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @cached_property
    def nbytes(self) -> int:
        """Approximate memory held (what the per-process caches bound by), the byte-order
        codes and their inverse included whether made yet or not."""
        # str objects and pointers, as if every id were decoded (kept ids are when asked).
        ids = self.ids
        text = ids.text_bytes if isinstance(ids, KeptIds) else sum(map(len, ids.tolist()))
        text += 50 * ids.size
        arrays = (self.pk, self.document, self.start, self.end)
        return text + sum(a.nbytes for a in arrays) + 16 * self.ids.size

    @cached_property
    def fingerprint(self) -> str:
        """Identifies these units (level, ids, pks and spans) for caches of derived arrays."""
        return fingerprint_of(
            self.level,
            "\0".join(self.ids.tolist()).encode(),
            (self.pk, self.document, self.start, self.end),
        )

    @cached_property
    def codes(self) -> np.ndarray:
        """Each unit's code in the byte order of the ids (trec_eval's tie order,
        ``numerics.id_order``); read-only. A units file keeps them (``kept_units``)."""
        code = byte_order_codes(self.ids)
        code.flags.writeable = False
        return code

    @cached_property
    def unit_of_code(self) -> np.ndarray:
        """The unit index of each code (the codes' inverse permutation); read-only. Kept
        with the units: every run's top rows at these units map codes back through it
        (once per run before, 5,000,000 entries written each time at *large*)."""
        unit = np.empty(self.codes.size, dtype=np.int64)
        unit[self.codes] = np.arange(self.codes.size)
        unit.flags.writeable = False
        return unit


def fingerprint_of(level: str, joined_ids: bytes, arrays) -> str:
    """``Units.fingerprint`` from the ids joined by NUL bytes, UTF-8, and the four arrays."""
    digest = hashlib.blake2b(level.encode(), digest_size=16)
    digest.update(joined_ids)
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class LabelRows:
    """Labels as spans: ``source`` is an annotator code, or -1 for an adjudicated grade."""

    query: np.ndarray
    source: np.ndarray
    document: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grade: np.ndarray
    annotators: list[str]

    def take(self, mask: np.ndarray) -> LabelRows:
        """The rows where ``mask`` holds (the annotator names unchanged)."""
        return LabelRows(
            self.query[mask],
            self.source[mask],
            self.document[mask],
            self.start[mask],
            self.end[mask],
            self.grade[mask],
            self.annotators,
        )


@dataclass(frozen=True)
class UnitGrades:
    """Consensus grade of each judged (query, unit); parallel arrays sorted by both."""

    query: np.ndarray  # query pk
    unit: np.ndarray  # index into Units
    grade: np.ndarray
    n_annotators: np.ndarray
    units: Units
    policy: dict


def levels(project: Project) -> list[str]:
    return [DOCUMENTS, PAGES, *project.chunkings.values_list("name", flat=True)]


def check_level(project: Project, level: str) -> str:
    """``level`` if the project has it; else ``ValueError`` naming the levels it has."""
    known = levels(project)
    if level not in known:
        raise ValueError(f"no level {level!r}; use one of {', '.join(known)}")
    return level


def units_for_level(project: Project, level: str) -> Units:
    if level in (DOCUMENTS, PAGES):
        # Page starts (JSON, decoded row by row) are read only for the pages level.
        fields = ("pk", "doc_id", "length", "page_starts")[: 4 if level == PAGES else 3]
        rows = list(
            project.documents.annotate(length=Length("text")).order_by("pk").values_list(*fields)
        )
        if level == DOCUMENTS:
            return Units(
                level,
                np.array([r[1] for r in rows], dtype=object),
                np.array([r[0] for r in rows], dtype=np.int64),
                np.array([r[0] for r in rows], dtype=np.int64),
                np.zeros(len(rows), dtype=np.int64),
                np.array([r[2] for r in rows], dtype=np.int64),
            )
        ids, document, start, end = [], [], [], []
        for pk, doc_id, length, page_starts in rows:
            starts = list(page_starts) or [0]
            ends = [*starts[1:], length]
            for number, (s, e) in enumerate(zip(starts, ends, strict=True), start=1):
                ids.append(f"{doc_id}#p{number}")
                document.append(pk)
                start.append(s)
                end.append(e)
        document_pk = np.array(document, dtype=np.int64)
        return Units(
            level,
            np.array(ids, dtype=object),
            document_pk,
            document_pk,
            np.array(start, dtype=np.int64),
            np.array(end, dtype=np.int64),
        )
    chunking = Chunking.objects.filter(project=project, name=level).first()
    if chunking is None:
        raise ValueError(f"no level {level!r}: use documents, pages or a chunking's name")
    rows = list(
        Chunk.objects.filter(chunking=chunking)
        .order_by("pk")
        .values_list("pk", "chunk_id", "document_id", "start", "end")
    )
    return Units(
        level,
        np.array([r[1] for r in rows], dtype=object),
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=np.int64),
        np.array([r[4] for r in rows], dtype=np.int64),
    )


def level_units(project: Project, level: str, *, in_memory: bool = True) -> Units:
    """The units of a level, kept per process (unless not ``in_memory``: the worker) and in
    a file (``gold.kept_units``) while they stay the same: documents and chunks are added
    (their counts, kept by the database, move), deleted or a document replaced in place
    (each moves the project's revision ``reset``)."""
    if level in (DOCUMENTS, PAGES):
        rows = ProjectFigures.objects.filter(project_id=project.pk)
        count = rows.values_list("documents", flat=True).first()
    else:
        rows = ChunkingFigures.objects.filter(chunking__project=project, chunking__name=level)
        count = rows.values_list("chunks", flat=True).first()
    if count is None:  # no such chunking (an error), or no figures row
        return units_for_level(project, level)
    key = ("units", project.pk, project.created_at, level, count, revision(project.pk).reset)
    from_file = lambda: kept_units(key, lambda: units_for_level(project, level))  # noqa: E731
    return cache.get(key, from_file) if in_memory else from_file()


def _rows(values: list[tuple], annotators: list[str]) -> LabelRows:
    """(query, annotator name or None for adjudicated, document, start, end, grade) rows."""
    code = {name: index for index, name in enumerate(annotators)}
    return LabelRows(
        query=np.array([v[0] for v in values], dtype=np.int64),
        source=np.array([-1 if v[1] is None else code[v[1]] for v in values], dtype=np.int64),
        document=np.array([v[2] for v in values], dtype=np.int64),
        start=np.array([v[3] for v in values], dtype=np.int64),
        end=np.array([v[4] for v in values], dtype=np.int64),
        grade=np.array([v[5] for v in values], dtype=np.int64),
        annotators=annotators,
    )


def live_labels(
    project: Project,
    *,
    sources: Sources | None,
    annotators: list[str] | None = None,
    adjudicated: bool = True,
    post_edited: bool = True,
    queries: list[int] | None = None,
) -> LabelRows:
    """The live labels that count for ``sources`` (``annotator.sources.resolve_sources``;
    None: every label, for the per-process state that serves every choice), narrowed to
    ``annotators`` when named (``post_edited=False``: leaving out those given while a
    judge's suggestion was on screen) and, with ``adjudicated`` (and when the sources
    count adjudications), the adjudications; ``queries``: only those queries' (by pk)."""
    judgments = Judgment.objects.filter(query__project=project)
    adjudications = Adjudication.objects.filter(query__project=project)
    if sources is not None:
        judgments = sources.judgments(judgments)
        adjudicated = adjudicated and sources.adjudicated
    if queries is not None:
        judgments = judgments.filter(query_id__in=queries)
        adjudications = adjudications.filter(query_id__in=queries)
    if not post_edited:
        judgments = judgments.filter(suggestion_shown=False)
    if annotators is not None:
        judgments = judgments.filter(annotator__username__in=annotators)
    rows = list(
        judgments.values_list("query_id", "annotator_id", "document_id", "start", "end", "grade")
    )
    if adjudicated:
        rows += [
            (q, 0, d, s, e, g)  # annotator 0: no user has that pk; becomes source -1
            for q, d, s, e, g in adjudications.values_list(
                "query_id", "document_id", "start", "end", "grade"
            )
        ]
    table = np.array(rows, dtype=np.int64).reshape(-1, 6)
    # Names are looked up once per annotator, not joined onto every label row.
    usernames = dict(
        get_user_model()
        .objects.filter(pk__in=np.unique(table[:, 1]).tolist())
        .values_list("pk", "username")
    )
    names = sorted(usernames.values())
    user_pks = np.array([0, *usernames], dtype=np.int64)
    codes = np.array([-1, *(names.index(n) for n in usernames.values())], dtype=np.int64)
    order = np.argsort(user_pks)
    source = codes[order][np.searchsorted(user_pks[order], table[:, 1])]
    return LabelRows(
        query=table[:, 0].copy(),
        source=source,
        document=table[:, 2].copy(),
        start=table[:, 3].copy(),
        end=table[:, 4].copy(),
        grade=table[:, 5].copy(),
        annotators=names,
    )


def frozen_labels(gold_set: GoldSet) -> LabelRows:
    values = [
        (q, None if adjudicated else annotator, d, s, e, g)
        for q, annotator, adjudicated, d, s, e, g in gold_set.labels.order_by("id").values_list(
            "query_id", "annotator", "adjudicated", "document_id", "start", "end", "grade"
        )
    ]
    names = sorted({v[1] for v in values if v[1] is not None})
    return _rows(values, names)


def annotator_unit_grades(labels: LabelRows, units: Units, mapping: MappingPolicy):
    """Each source's grade of each (query, unit) it touched: its best qualifying label
    (``numerics.mapping.best_evidence``).

    Returns parallel arrays (query, unit, source, grade), one row per distinct triple.
    """
    evidence, unit = map_pairs(
        SpanArrays(labels.document, labels.start, labels.end),
        SpanArrays(units.document, units.start, units.end),
        policy=mapping,
    )
    query = labels.query[evidence]
    source = labels.source[evidence]
    grade = labels.grade[evidence]
    best = best_evidence(grade, query, unit, source)
    return query[best], unit[best], source[best], grade[best]


def same_span_units(labels: LabelRows, rows: np.ndarray, units: Units):
    """(label row, unit) pairs, in the order of ``rows``, where the unit's span is exactly
    the span of label row ``rows[k]``: how adjudications reach units."""
    empty = np.zeros(0, dtype=np.int64)
    if rows.size == 0 or units.ids.size == 0:
        return empty, empty
    # Only the units of those labels' documents can match: a level has millions of
    # units, a project a few hundred adjudications.
    candidates = np.flatnonzero(np.isin(units.document, labels.document[rows]))
    spans: dict[tuple[int, int, int], list[int]] = {}
    for index, document, start, end in zip(
        candidates.tolist(),
        units.document[candidates].tolist(),
        units.start[candidates].tolist(),
        units.end[candidates].tolist(),
        strict=True,
    ):
        spans.setdefault((document, start, end), []).append(index)
    pairs = [
        (row, index)
        for row, document, start, end in zip(
            rows.tolist(),
            labels.document[rows].tolist(),
            labels.start[rows].tolist(),
            labels.end[rows].tolist(),
            strict=True,
        )
        for index in spans.get((document, start, end), ())
    ]
    if not pairs:
        return empty, empty
    row, unit = (np.array(c, dtype=np.int64) for c in zip(*pairs, strict=True))
    return row, unit


def adjudicated_units(labels: LabelRows, units: Units):
    """(query, unit, grade) of every unit whose span is exactly an adjudicated span.

    Only the adjudication rows (``source`` < 0) count; several adjudications of one unit
    (given at different granularities on the same span) keep the highest grade.
    """
    row, unit = same_span_units(labels, np.flatnonzero(labels.source < 0), units)
    if row.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    query, grade = labels.query[row], labels.grade[row]
    best = best_evidence(grade, query, unit)
    return query[best], unit[best], grade[best]


def consensus_of(policy: dict) -> ConsensusPolicy:
    """The consensus part of a stored gold-set policy."""
    return ConsensusPolicy(
        rule=policy.get("rule", "majority"),
        min_annotators=policy.get("min_annotators", 1),
        adjudicated_first=policy.get("adjudicated_first", True),
    )


def unit_grades(
    labels: LabelRows,
    units: Units,
    *,
    mapping: MappingPolicy,
    consensus: ConsensusPolicy | None = None,
) -> UnitGrades:
    """Consensus grade of each (query, unit) the labels reach under ``mapping`` (callers
    choose it with ``gold.policy.resolve_mapping``)."""
    consensus = consensus or ConsensusPolicy()
    query, unit, _source, grade = annotator_unit_grades(
        labels.take(labels.source >= 0), units, mapping
    )
    if consensus.adjudicated_first:
        a_query, a_unit, a_grade = adjudicated_units(labels, units)
    else:
        a_query = a_unit = a_grade = np.zeros(0, dtype=np.int64)
    # Number the judged (query, unit) pairs, annotated or adjudicated, in sorted order.
    width = max(int(units.ids.size), 1)
    keys = np.concatenate([query * width + unit, a_query * width + a_unit])
    pairs, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.ravel()
    final, n = consensus_grades(
        inverse[: query.size],
        grade,
        pairs.size,
        consensus.rule,
        consensus.min_annotators,
        inverse[query.size :],
        a_grade,
    )
    keep = final != NO_CONSENSUS
    return UnitGrades(
        query=(pairs // width)[keep],
        unit=(pairs % width)[keep],
        grade=final[keep],
        n_annotators=n[keep],
        units=units,
        policy={"consensus": consensus.to_dict(), "mapping": str(mapping), "level": units.level},
    )


def gold_labels(
    project: Project, gold_set: GoldSet | None, sources: Sources | None = None
) -> LabelRows:
    """The labels behind the gold: a frozen version's, or the live ones of ``sources``
    (resolved; ``people,assessors`` when None)."""
    if gold_set is not None:
        return frozen_labels(gold_set)
    return live_labels(project, sources=resolve_sources(project, sources))


def gold_unit_grades(
    project: Project,
    level: str,
    *,
    gold_set: GoldSet | None = None,
    mapping: MappingPolicy | None = None,
    labels: LabelRows | None = None,
    units: Units | None = None,
    sources: Sources | None = None,
) -> UnitGrades:
    """Grades at ``level`` from a frozen gold set (its own policy; its own mapping unless
    another is given) or the live labels. ``labels`` and ``units``, when given, are
    ``gold_labels(project, gold_set)`` and ``units_for_level(project, level)`` already
    loaded (a dashboard maps one load of labels onto several levels)."""
    units = units if units is not None else units_for_level(project, level)
    labels = labels if labels is not None else gold_labels(project, gold_set, sources)
    consensus = consensus_of(gold_set.policy) if gold_set is not None else None
    return unit_grades(
        labels, units, consensus=consensus, mapping=resolve_mapping(project, gold_set, mapping)
    )


def unit_index(units: Units, unit_id: str) -> int | None:
    """Position of the unit named ``unit_id`` among ``units``, or None."""
    found = np.flatnonzero(units.ids == unit_id)
    return int(found[0]) if found.size else None
