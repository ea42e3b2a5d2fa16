"""LLM judges grading a quality dimension: one judging job of kind ``quality`` per
dimension, one pair per document or per site (as the dimension is graded), no query.

The same jobs as for relevance labels (``judges.engine``): the judge's budget, rate limit,
retries, breaker, counters, failure kinds, pausing, cancelling and resuming. The prompt
is the dimension's own (``QualityPrompt``; ``prompts.QUALITY_PROMPT`` until an owner
writes one), kept on the job as sent; the answer is read strictly (a JSON grade, or a
lone digit, in the dimension's scale; anything else is a failure that writes nothing).
A grade is written through ``quality.grades.change_quality`` as the judge version's
pseudo-annotator, so it is the label source ``judge:<slug>@<n>`` with history, never a
person's. A unit this version has graded already is skipped, as a pair it has judged.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from django.db import transaction

from annotator.caches import cache
from annotator.models import Document, Membership, ProjectFigures
from annotator.revisions import revision
from formats.errors import define, gettext_noop
from gold.units import DOCUMENTS, level_units
from quality.grades import QualitySource, change_quality, document_sites
from quality.models import QualityDimension, QualityGrade

from .client import Outcome
from .engine import _settle, caller_or_fail, finish, record_grade, run_calls
from .models import JobKind, JobStatus, Judge, JudgeJob, JudgePair, PairStatus
from .prompts import (
    MAX_PASSAGE_CHARS,
    QUALITY_PROMPT,
    language_of,
    normalise_prompt,
    quality_template_for,
    render,
    unknown_quality_placeholders,
)
from .services import JudgeError, estimate_tokens, record_job

SITE_DOCUMENTS = 5  # a site is shown by its first documents
SITE_EXCERPT = 600  # characters of each

SCOPES = ("all", "people")
NO_VERSION = define("quality_job.no_version", gettext_noop("the judge has no version"))
BAD_SCOPE = define("quality_job.bad_scope", gettext_noop("scope must be all or people"))
BAD_MAX = define("quality_job.bad_max", gettext_noop("the number of units is at least 1"))
UNKNOWN_QUALITY_PLACEHOLDERS = define(
    "quality_job.unknown_placeholders",
    gettext_noop("unknown placeholders in the quality prompt: %(names)s"),
)


class Unit(NamedTuple):
    """What one quality pair grades: a document (pk), or a site. A tuple, hashed and
    compared in C: a plan sorts and filters one per document (a frozen dataclass's
    Python-level hash took 0.4 s at 100,000 documents)."""

    document: int | None = None
    site: str = ""

    def source(self, documents: dict[int, Document] | None = None) -> QualitySource:
        if self.document is not None:
            document = (documents or {}).get(self.document) or Document.objects.get(
                pk=self.document
            )
            return QualitySource(document=document)
        return QualitySource(site=self.site)


def dimension_prompt(dimension: QualityDimension) -> str:
    """The dimension's own prompt for judges (the default until an owner writes one)."""
    from .models import QualityPrompt

    found = QualityPrompt.objects.filter(dimension=dimension).values_list("prompt", flat=True)
    return found.first() or QUALITY_PROMPT


def check_prompt(prompt: str) -> str:
    """``prompt`` normalised; ``JudgeError`` naming the placeholders it should not use."""
    prompt = normalise_prompt(prompt)
    unknown = unknown_quality_placeholders(prompt)
    if unknown:
        raise JudgeError(UNKNOWN_QUALITY_PLACEHOLDERS(names=", ".join(unknown)))
    return prompt


def set_dimension_prompt(dimension: QualityDimension, prompt: str) -> str:
    """Keep ``prompt`` (checked, normalised) as the dimension's; the default keeps none."""
    from .models import QualityPrompt

    prompt = check_prompt(prompt)
    if prompt == normalise_prompt(QUALITY_PROMPT):
        QualityPrompt.objects.filter(dimension=dimension).delete()
    else:
        QualityPrompt.objects.update_or_create(dimension=dimension, defaults={"prompt": prompt})
    return prompt


def all_units(dimension: QualityDimension) -> list[Unit]:
    """Every unit of the dimension in the order of the documents: each document of the
    project, or each site its documents name (at its first document; documents naming
    none have no site to grade). Kept per process while the documents stay the same
    (their count and the project's reset revision: a document replaced in place moves
    it; the dimension's site field is part of the key)."""
    return list(_kept_units(dimension, _units_key(dimension)).units)


def _units_key(dimension: QualityDimension) -> tuple | None:
    """The cache key of the dimension's units; None when the project has no kept figures
    (its units are then read every time)."""
    documents = (
        ProjectFigures.objects.filter(project_id=dimension.project_id)
        .values_list("documents", flat=True)
        .first()
    )
    if documents is None:
        return None
    return (
        "quality_units",
        dimension.pk,
        dimension.unit,
        dimension.site_field,
        dimension.site_host,
        documents,
        revision(dimension.project_id).reset,
    )


def _kept_units(dimension: QualityDimension, key: tuple | None) -> KeptUnits | DocumentUnits:
    """``all_units``' units with their places, kept under ``key`` (None: read now); a
    per-document dimension's are the documents level's units (kept in a file)."""
    if not dimension.per_site:
        return DocumentUnits(level_units(dimension.project, DOCUMENTS).pk)
    kept = None if key is None else cache.peek(key)
    if kept is None:
        kept = KeptUnits(tuple(_read_units(dimension)))
        if key is not None:
            cache.put(key, kept)
    return kept


@dataclass(frozen=True)
class KeptUnits:
    units: tuple[Unit, ...]

    @cached_property
    def place(self) -> dict[Unit, int]:
        """Each unit's index in ``units``."""
        return {unit: i for i, unit in enumerate(self.units)}

    @property
    def nbytes(self) -> int:  # roughly, for the cache's bound (the places included)
        return 220 * len(self.units)


@dataclass(frozen=True)
class DocumentUnits:
    """A per-document dimension's units: the project's document pks, ascending, each a
    ``Unit`` only when read. At a million documents a tuple of units and a dict of their
    places took seconds of a first estimate; a plan reads people's units, the version's
    and the first few of the rest."""

    pks: np.ndarray

    @property
    def units(self) -> _DocumentSequence:
        return _DocumentSequence(self.pks)

    @property
    def place(self) -> _DocumentPlaces:
        return _DocumentPlaces(self.pks)

    @property
    def nbytes(self) -> int:
        return self.pks.nbytes


class _DocumentSequence(Sequence):
    """The units of ascending document pks, made as they are read."""

    def __init__(self, pks: np.ndarray):
        self._pks = pks

    def __len__(self) -> int:
        return int(self._pks.size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [Unit(pk) for pk in self._pks[index].tolist()]
        return Unit(int(self._pks[index]))

    def __iter__(self) -> Iterator[Unit]:
        for start in range(0, self._pks.size, 4096):
            yield from (Unit(pk) for pk in self._pks[start : start + 4096].tolist())


class _DocumentPlaces:
    """Each document unit's index among ascending pks (``KeptUnits.place`` as a search)."""

    def __init__(self, pks: np.ndarray):
        self._pks = pks

    def _index(self, unit: Unit) -> int | None:
        if unit.document is None or unit.site:
            return None
        index = int(np.searchsorted(self._pks, unit.document))
        found = index < self._pks.size and self._pks[index] == unit.document
        return index if found else None

    def __contains__(self, unit: Unit) -> bool:
        return self._index(unit) is not None

    def __getitem__(self, unit: Unit) -> int:
        index = self._index(unit)
        if index is None:
            raise KeyError(unit)
        return index


def _read_units(dimension: QualityDimension) -> list[Unit]:
    documents = Document.objects.filter(project_id=dimension.project_id).order_by("pk")
    if not dimension.per_site:
        return [Unit(pk) for pk in documents.values_list("pk", flat=True)]
    sites = document_sites(dimension, documents)
    first = dict.fromkeys(sites[pk] for pk in sorted(sites) if sites[pk])
    return [Unit(site=site) for site in first]


def unit_count(dimension: QualityDimension) -> int:
    """``len(all_units(dimension))``: a per-document dimension has a unit per document
    (the project's kept figure), a per-site one has its kept sites."""
    documents = (
        ProjectFigures.objects.filter(project_id=dimension.project_id)
        .values_list("documents", flat=True)
        .first()
    )
    if documents is not None and not dimension.per_site:
        return documents
    return len(all_units(dimension))


def _key(document_id, site) -> Unit:
    return Unit(document=document_id) if document_id is not None else Unit(site=site)


def graded_by_people(dimension: QualityDimension) -> set[Unit]:
    pseudo = Membership.objects.filter(project_id=dimension.project_id, is_pseudo=True)
    rows = (
        QualityGrade.objects.filter(dimension=dimension)
        .exclude(annotator_id__in=pseudo.values("user_id"))
        .values_list("document_id", "site")
    )
    return {_key(*row) for row in rows}


def graded_by(version, dimension: QualityDimension) -> set[Unit]:
    """The units this judge version has a grade of on ``dimension``."""
    rows = QualityGrade.objects.filter(
        dimension=dimension, annotator=version.annotator
    ).values_list("document_id", "site")
    return {_key(*row) for row in rows}


@dataclass
class QualityPlan:
    """What a quality job will ask, before it starts."""

    judge: Judge
    dimension: QualityDimension
    prompt: str
    scope: str
    units: PlannedUnits  # to grade, people's units first
    already: int  # units in scope this version has graded (skipped)

    @property
    def version(self):
        return self.judge.current

    @property
    def calls(self) -> int:
        return min(len(self.units), self.judge.budget)

    def prompt_tokens(self) -> int:
        prompts = prompts_for(self.dimension, self.prompt, self.units[: self.calls])
        return sum(estimate_tokens(p) for p in prompts.values())

    @property
    def max_output_tokens(self) -> int:
        return self.calls * self.version.max_tokens


def plan_quality(
    judge: Judge,
    dimension: QualityDimension,
    *,
    scope: str = "all",
    max_units: int | None = None,
    prompt: str | None = None,
) -> QualityPlan:
    """The units to grade: every unit (``all``) or those people graded (``people``, for
    calibration), people's first either way, without those this version graded; at most
    ``max_units``. ``prompt``: another prompt for the dimension (checked here; kept as the
    dimension's when the job starts), else the dimension's own. Nothing is written."""
    if judge.current is None:
        raise JudgeError(NO_VERSION())
    if scope not in SCOPES:
        raise JudgeError(BAD_SCOPE())
    if max_units is not None and max_units < 1:
        raise JudgeError(BAD_MAX())
    chosen = check_prompt(prompt) if prompt is not None else dimension_prompt(dimension)
    kept = _kept_units(dimension, _units_key(dimension))
    people = graded_by_people(dimension)
    done = graded_by(judge.current, dimension)
    units, already = planned_units(kept, people, done, scope=scope, max_units=max_units)
    return QualityPlan(judge, dimension, chosen, scope, units, already)


def planned_units(
    kept: KeptUnits | DocumentUnits,
    people: set[Unit],
    done: set[Unit],
    *,
    scope: str,
    max_units: int | None,
) -> tuple[PlannedUnits, int]:
    """The units to grade (those of the scope, people's first, without ``done``; at most
    ``max_units``) and how many of the scope are done. Worked out from the graded units
    and their places, not by a test per unit of the project: an estimate reads the first
    few, and at a million documents it took 175 ms a request."""
    first = sorted((u for u in people if u in kept.place), key=kept.place.__getitem__)
    in_scope = len(kept.units) if scope == "all" else len(first)
    already = sum(1 for u in done if u in kept.place and (scope == "all" or u in people))
    count = in_scope - already
    if max_units is not None:
        count = min(count, max_units)
    rest = () if scope == "people" else kept.units
    return PlannedUnits(first, rest, people, done, count), already


class PlannedUnits(Sequence):
    """A plan's units to grade, in order: ``first`` (people's, in document order), then
    the other units of ``rest``, without those in ``done``; ``count`` of them. Made as
    they are read: an estimate reads its first few."""

    def __init__(self, first, rest, people, done, count: int):
        self._first, self._rest, self._people, self._done = first, rest, people, done
        self._count = count
        self._made: list[Unit] = []
        self._source = self._walk()

    def _walk(self) -> Iterator[Unit]:
        for unit in self._first:
            if unit not in self._done:
                yield unit
        for unit in self._rest:
            if unit not in self._people and unit not in self._done:
                yield unit

    def _make(self, n: int) -> None:
        n = min(n, self._count)
        if len(self._made) < n:
            self._made.extend(itertools.islice(self._source, n - len(self._made)))

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):
        if isinstance(index, slice):
            _start, stop, step = index.indices(self._count)
            self._make(stop if step > 0 else self._count)
            return self._made[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        self._make(index + 1)
        return self._made[index]

    def __iter__(self) -> Iterator[Unit]:
        self._make(self._count)
        return iter(self._made)


def start_quality(plan: QualityPlan, *, created_by=None, enqueue: bool = True) -> JudgeJob:
    """Keep the plan's prompt as the dimension's, record the job (one pair per unit, the
    prompt it sends) and queue it."""
    with transaction.atomic():
        set_dimension_prompt(plan.dimension, plan.prompt)
        return record_job(
            [JudgePair(document_id=u.document, site=u.site) for u in plan.units],
            enqueue=enqueue,
            version=plan.version,
            kind=JobKind.QUALITY,
            dimension=plan.dimension,
            prompt=plan.prompt,
            scope=plan.scope,
            level=plan.dimension.unit,
            budget=plan.judge.budget,
            created_by=created_by,
        )


def _scale(dimension: QualityDimension) -> str:
    return "\n".join(f"{grade} = {label}" for grade, label in reversed(dimension.shown_labels))


def _metadata(metadata) -> str:
    return json.dumps(metadata or {}, ensure_ascii=False, sort_keys=True)[:2000]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"


def prompts_for(dimension: QualityDimension, template: str, units: list[Unit]) -> dict[Unit, str]:
    """The rendered prompt of every unit: a document's title, metadata and text; a site's
    name with its first documents (titles, metadata, openings) as its text. The default
    prompt speaks the language of the text it sends (``prompts.language_of``)."""
    project = dimension.project
    documents = Document.objects.filter(project=project)
    by_pk = documents.filter(pk__in=[u.document for u in units if u.document is not None]).in_bulk()
    site_documents: dict[str, list[Document]] = {}
    sites = {u.site for u in units if u.document is None}
    if sites:
        chosen = documents.order_by("pk").only("pk", "doc_id", "title", "text", "metadata")
        for pk, site in document_sites(dimension, documents).items():
            if site in sites and len(site_documents.setdefault(site, [])) < SITE_DOCUMENTS:
                site_documents[site].append(pk)
        wanted = {pk for pks in site_documents.values() for pk in pks}
        loaded = chosen.filter(pk__in=wanted).in_bulk()
        site_documents = {s: [loaded[pk] for pk in pks] for s, pks in site_documents.items()}
    # The same for every unit: worked out once (a cost estimate renders a thousand prompts).
    common = {
        "dimension": dimension.name,
        "scale": _scale(dimension),
        "max_grade": str(dimension.max_grade),
        "guidelines": project.guidelines,
    }
    templates = {language: quality_template_for(template, language) for language in ("en", "zh")}
    prompts = {}
    for unit in units:
        if unit.document is not None:
            document = by_pk[unit.document]
            values = {
                "site": "",
                "title": document.title,
                "metadata": _metadata(document.metadata),
                "text": _cut(document.text, MAX_PASSAGE_CHARS),
            }
        else:
            shown = site_documents.get(unit.site, [])
            values = {
                "site": unit.site,
                "title": "",
                "metadata": "",
                "text": _cut(
                    "\n\n".join(
                        f"[{d.doc_id}] {d.title}\n{_metadata(d.metadata)}\n"
                        f"{_cut(d.text, SITE_EXCERPT)}"
                        for d in shown
                    ),
                    MAX_PASSAGE_CHARS,
                ),
            }
        values.update(common)
        prompts[unit] = render(templates[language_of(values["text"])], values)
    return prompts


def run_quality_job(job: JudgeJob, sleep) -> None:
    """The worker's part (``judges.engine`` claims the job and calls this)."""
    dimension = job.dimension
    pending = list(job.pairs.filter(status=PairStatus.PENDING).order_by("pk"))
    key = {p.pk: _key(p.document_id, p.site) for p in pending}
    done = graded_by(job.version, dimension)
    JudgePair.objects.filter(pk__in=[p.pk for p in pending if key[p.pk] in done]).update(
        status=PairStatus.SKIPPED
    )
    pending = [p for p in pending if key[p.pk] not in done]
    if not pending:
        finish(job, JobStatus.DONE)
        return
    write = _writer(job, dimension)
    caller = caller_or_fail(job, pending, sleep, lambda p, o: _settle(job, p, o, write))
    if caller is None:
        return
    prompts = prompts_for(dimension, job.prompt or QUALITY_PROMPT, [key[p.pk] for p in pending])
    top = dimension.max_grade
    run_calls(job, pending, lambda pair: caller.judge(prompts[key[pair.pk]], top), write)


def _writer(job: JudgeJob, dimension: QualityDimension):
    def write(pair: JudgePair, outcome: Outcome) -> None:
        """The judge's grade (through ``change_quality``), the pair's outcome and the job's
        counters in one transaction; a failure writes no grade."""
        record_grade(
            job,
            pair,
            outcome,
            lambda: change_quality(
                dimension=dimension,
                annotator=job.version.annotator,
                source=_key(pair.document_id, pair.site).source(),
                grade=outcome.grade,
                note=outcome.reason,
            ),
        )

    return write
