"""Answer runs measured: the one path from answers, judgements and gold evidence to the
numbers the dashboard, ``answer_metrics``, ``export_metrics`` and the API show.

Judgements that count are those of the label sources chosen (``answer_sources``: the
tokens of ``annotator.sources``, ``people`` by default — pseudo-annotators, imported
assessor sets and judge versions, count only when chosen; a lead's adjudication counts
when people do), combined per target by ``numerics.answers.combine_values``
(a lead's adjudication, else the low median). Citation validity needs no judgement: a
citation is valid when the query's gold evidence — the live labels of
``people,assessors``, mapped onto the cited span under the project's mapping policy and
combined as for any unit — grades it at least the relevance threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.models import Membership
from annotator.sources import ASSESSORS, PEOPLE, Sources, resolve_sources, source_labels
from gold.policy import resolve_mapping
from gold.units import Units, live_labels, unit_grades
from nuggets.models import Nugget
from numerics import answers as measures

from .models import (
    Answer,
    AnswerAdjudication,
    AnswerJudgment,
    AnswerRun,
    Aspect,
    Citation,
    Sentence,
)

MEASURES = measures.MEASURES
DEFAULT_ANSWER_SOURCES = PEOPLE


def answer_sources(project, requested=None) -> Sources:
    """The label sources answer measures stand on: ``requested`` (a comma-separated text,
    tokens or ``Sources``) resolved by ``annotator.sources.resolve_sources``, ``people``
    when nothing is asked; ``SourcesError`` for tokens naming nothing of the project."""
    if isinstance(requested, Sources):
        return requested
    if isinstance(requested, list | tuple):
        requested = ",".join(requested)
    return resolve_sources(project, (requested or "").strip() or DEFAULT_ANSWER_SOURCES)


def citation_validity(project, citations: list[tuple[int, int, int, int]]) -> np.ndarray:
    """Whether each (query pk, document pk, start, end) citation reaches its query's gold
    evidence: the consensus grade of the labels mapped onto the span (under the project's
    mapping policy) is at least the project's relevance threshold."""
    if not citations:
        return np.zeros(0, dtype=bool)
    table = np.array(citations, dtype=np.int64).reshape(-1, 4)
    units = Units(
        "citations",
        np.array([str(i) for i in range(len(table))], dtype=object),
        np.arange(len(table), dtype=np.int64),
        table[:, 1].copy(),
        table[:, 2].copy(),
        table[:, 3].copy(),
    )
    labels = live_labels(
        project,
        sources=resolve_sources(project),
        queries=sorted(set(table[:, 0].tolist())),
    )
    grades = unit_grades(labels, units, mapping=resolve_mapping(project))
    valid = np.zeros(len(table), dtype=bool)
    mine = grades.query == table[grades.unit, 0]
    relevant = mine & (grades.grade >= project.relevance_threshold)
    valid[grades.unit[relevant]] = True
    return valid


def _people_values(
    run: AnswerRun, aspect: str, field: str | None, index: dict, sources: Sources | None = None
) -> np.ndarray:
    """Each target's combined value (``UNJUDGED`` where nobody judged it): people's
    judgements and adjudications, or — ``sources`` — the judgements of those label
    sources (``judge:<slug>`` …; adjudications only when people count)."""
    key = f"{field}_id" if field else "nugget_id"  # the answer grade: no target (None)
    judgments = AnswerJudgment.objects.filter(answer__run=run, aspect=aspect)
    if sources is None:
        pseudo = Membership.objects.filter(project=run.project_id, is_pseudo=True)
        judgments = judgments.exclude(annotator_id__in=pseudo.values("user_id"))
    else:
        judgments = sources.judgments(judgments)
    rows = judgments.values_list("answer_id", key, "value")
    target, value = [], []
    for answer_pk, target_pk, v in rows:
        position = index.get((answer_pk, target_pk))
        if position is not None:
            target.append(position)
            value.append(v)
    adjudicated = AnswerAdjudication.objects.filter(answer__run=run, aspect=aspect).values_list(
        "answer_id", key, "value"
    )
    if sources is not None and not sources.adjudicated:
        adjudicated = adjudicated.none()
    a_target, a_value = [], []
    for answer_pk, target_pk, v in adjudicated:
        position = index.get((answer_pk, target_pk))
        if position is not None:
            a_target.append(position)
            a_value.append(v)
    return measures.combine_values(len(index), target, value, a_target, a_value)


@dataclass(frozen=True)
class RunScores:
    """Each answer's measures (NaN where undefined), in the order of ``qids``."""

    run: AnswerRun
    answer_pks: list[int]
    qids: list[str]
    values: dict[str, np.ndarray]

    def mean(self, name: str) -> tuple[float | None, int]:
        return measures.mean_defined(self.values[name])

    def summary(self) -> dict[str, dict]:
        """``{measure: {"mean": float or None, "answers": n defined}}``."""
        out = {}
        for name in MEASURES:
            mean, n = self.mean(name)
            out[name] = {"mean": None if mean is None else round(mean, 6), "answers": n}
        return out

    def per_query(self) -> list[dict]:
        rows = []
        for i, qid in enumerate(self.qids):
            row = {"qid": qid, "answer": self.answer_pks[i]}
            for name in MEASURES:
                value = float(self.values[name][i])
                row[name] = round(value, 6) if np.isfinite(value) else None
            rows.append(row)
        return rows


def run_scores(run: AnswerRun, sources: Sources | None = None) -> RunScores:
    """Every measure of every answer of the run, on people's judgements or (``sources``)
    on those label sources' (``answers.calibration`` scores a judge so)."""
    answers = list(
        Answer.objects.filter(run=run)
        .order_by("query__qid")
        .values_list("pk", "query_id", "query__qid")
    )
    position = {pk: i for i, (pk, _q, _qid) in enumerate(answers)}
    n = len(answers)
    # Nuggets: one (answer, nugget) pair per nugget of the answer's query.
    by_query: dict[int, list[tuple[int, bool]]] = {}
    for pk, query_pk, importance in (
        Nugget.objects.filter(query_id__in={q for _p, q, _ in answers})
        .order_by("query_id", "order", "pk")
        .values_list("pk", "query_id", "importance")
    ):
        by_query.setdefault(query_pk, []).append((pk, importance == "vital"))
    pairs = [(a, nugget, vital) for a, q, _ in answers for nugget, vital in by_query.get(q, ())]
    nugget_index = {(a, nugget): i for i, (a, nugget, _v) in enumerate(pairs)}
    nugget_values = _people_values(run, Aspect.NUGGET, "nugget", nugget_index, sources)
    scores = measures.nugget_scores(
        n,
        np.array([position[a] for a, _n, _v in pairs], dtype=np.int64),
        nugget_values,
        np.array([v for _a, _n, v in pairs], dtype=bool),
    )
    # Sentences and citations.
    sentences = list(
        Sentence.objects.filter(answer__run=run)
        .order_by("answer_id", "number")
        .values_list("pk", "answer_id")
    )
    sentence_index = {(a, s): i for i, (s, a) in enumerate(sentences)}
    sentence_position = {s: i for i, (s, _a) in enumerate(sentences)}
    citations = list(
        Citation.objects.filter(answer__run=run)
        .order_by("sentence_id", "number")
        .values_list(
            "pk", "answer_id", "sentence_id", "answer__query_id", "document_id", "start", "end"
        )
    )
    citation_index = {(a, c): i for i, (c, a, *_rest) in enumerate(citations)}
    valid = citation_validity(run.project, [(q, d, s, e) for _c, _a, _s, q, d, s, e in citations])
    scores.update(
        measures.citation_measures(
            measures.Citations(
                n_answers=n,
                sentence_answer=np.array([position[a] for _s, a in sentences], dtype=np.int64),
                needs=_people_values(
                    run, Aspect.NEEDS_CITATION, "sentence", sentence_index, sources
                ),
                citation_sentence=np.array(
                    [sentence_position[s] for _c, _a, s, *_r in citations], dtype=np.int64
                ),
                support=_people_values(run, Aspect.SUPPORT, "citation", citation_index, sources),
                valid=valid,
            )
        )
    )
    crag_index = {(a, None): i for i, (a, _q, _qid) in enumerate(answers)}
    scores.update(
        measures.crag_measures(_people_values(run, Aspect.CRAG, None, crag_index, sources))
    )
    return RunScores(run, [a for a, _q, _qid in answers], [qid for _a, _q, qid in answers], scores)


def _level(levels: tuple[str, ...], value: int) -> str | None:
    return None if value == measures.UNJUDGED else levels[value]


def _answer_values(answer: Answer, sources: Sources | None, nuggets, sentences, citations):
    """One answer's combined values per aspect on ``sources`` (people when None)."""
    run = answer.run
    return {
        Aspect.NUGGET: _people_values(
            run,
            Aspect.NUGGET,
            "nugget",
            {(answer.pk, n.pk): i for i, n in enumerate(nuggets)},
            sources,
        ),
        Aspect.SUPPORT: _people_values(
            run,
            Aspect.SUPPORT,
            "citation",
            {(answer.pk, c.pk): i for i, c in enumerate(citations)},
            sources,
        ),
        Aspect.NEEDS_CITATION: _people_values(
            run,
            Aspect.NEEDS_CITATION,
            "sentence",
            {(answer.pk, s.pk): i for i, s in enumerate(sentences)},
            sources,
        ),
        Aspect.CRAG: _people_values(run, Aspect.CRAG, None, {(answer.pk, None): 0}, sources),
    }


def beside_sources(answer: Answer, sources: Sources) -> list[str]:
    """The sources shown beside the counted values in an answer's drill-down: ``people``
    and every judge version that judged this answer or is among ``sources``
    (``judge:<slug>@<n>``, in the order of their slugs and versions) — each unless it is
    all that counts (its column would repeat the counted values)."""
    project = answer.run.project
    judged = set(
        AnswerJudgment.objects.filter(answer=answer)
        .filter(
            annotator__in=Membership.objects.filter(project=project, is_pseudo=True).values(
                "user_id"
            )
        )
        .values_list("annotator__username", flat=True)
    )
    names = judged | {name for name, label in sources.chosen.items() if label != ASSESSORS}
    labels = source_labels(project, sorted(names))
    judges = sorted(
        {label for label in labels.values() if label.startswith("judge:")},
        key=lambda t: (t.partition("@")[0], int(t.partition("@")[2] or 0)),
    )
    # A column that would repeat the counted values (the one source counted) is left out.
    shown = [PEOPLE, *judges]
    return [t for t in shown if resolve_sources(project, t).key != sources.key]


def answer_detail(answer: Answer, sources: Sources | None = None) -> dict:
    """One answer's drill-down on ``sources`` (people when None): each nugget's status,
    each sentence with its citations' support and validity (or, uncited, whether it needs
    one), the CRAG grade and the answer's measures — the values the run's measures stand
    on; and beside them (``beside``) the values of people and of each judge version that
    judged the answer or is chosen (``beside_sources``), in the same order per row."""
    run = answer.run
    sources = answer_sources(run.project, sources)
    nuggets = list(answer.query.nuggets.order_by("order", "pk"))
    sentences = list(answer.sentences.order_by("number").prefetch_related("citations__document"))
    citations = [c for s in sentences for c in s.citations.all()]
    counted = _answer_values(answer, sources, nuggets, sentences, citations)
    beside = beside_sources(answer, sources)
    others = [
        _answer_values(answer, answer_sources(run.project, token), nuggets, sentences, citations)
        for token in beside
    ]

    def other(aspect, levels, i):
        return [_level(levels, int(values[aspect][i])) for values in others]

    valid = citation_validity(
        run.project, [(answer.query_id, c.document_id, c.start, c.end) for c in citations]
    )
    at = 0
    rows = []
    for i, sentence in enumerate(sentences):
        cited = []
        for citation in sentence.citations.all():
            cited.append(
                {
                    "number": citation.number,
                    "doc_id": citation.document.doc_id,
                    "start": citation.start,
                    "end": citation.end,
                    "text": citation.document.text[citation.start : citation.end],
                    "support": _level(measures.SUPPORT_LEVELS, int(counted[Aspect.SUPPORT][at])),
                    "beside": other(Aspect.SUPPORT, measures.SUPPORT_LEVELS, at),
                    "valid": bool(valid[at]),
                }
            )
            at += 1
        needs = _level(measures.NEEDS_LEVELS, int(counted[Aspect.NEEDS_CITATION][i]))
        rows.append(
            {
                "number": sentence.number,
                "text": sentence.text,
                "citations": cited,
                "needs_citation": None if cited else needs,
                "needs_beside": []
                if cited
                else other(Aspect.NEEDS_CITATION, measures.NEEDS_LEVELS, i),
            }
        )
    scores = run_scores_of_answer(run, answer.pk, sources)
    return {
        "qid": answer.query.qid,
        "query": answer.query.text,
        "sources": sources.names,
        "beside": beside,
        "nuggets": [
            {
                "id": n.nugget_id,
                "text": n.text,
                "importance": n.importance,
                "status": _level(measures.NUGGET_LEVELS, int(counted[Aspect.NUGGET][i])),
                "beside": other(Aspect.NUGGET, measures.NUGGET_LEVELS, i),
            }
            for i, n in enumerate(nuggets)
        ],
        "sentences": rows,
        "crag": _level(measures.CRAG_LEVELS, int(counted[Aspect.CRAG][0])),
        "crag_beside": other(Aspect.CRAG, measures.CRAG_LEVELS, 0),
        "measures": scores,
    }


def run_scores_of_answer(run: AnswerRun, answer_pk: int, sources: Sources | None = None) -> dict:
    """The measures of one answer (from the run's scores, so they are the same numbers)."""
    for row in run_scores(run, sources).per_query():
        if row["answer"] == answer_pk:
            return {name: row[name] for name in MEASURES}
    return {}


def export_table(project, sources=None) -> tuple[list[str], list[list]]:
    """Each active answer run's means (``export_metrics --table answers [--sources …]``):
    a row per run, a column per measure and one with how many answers it is defined for,
    and the label sources they stand on (people by default)."""
    sources = answer_sources(project, sources)
    header = ["answer_run", "answers"]
    for name in MEASURES:
        header += [name, f"{name}_answers"]
    header.append("sources")
    rows = []
    for run in AnswerRun.objects.filter(project=project).active():
        summary = run_scores(run, sources).summary()
        row = [run.name, run.n_answers]
        for name in MEASURES:
            row += [summary[name]["mean"], summary[name]["answers"]]
        rows.append([*row, sources.text])
    return header, rows
