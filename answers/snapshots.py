"""Answer judgements in gold sets (``gold.parts``): frozen with the labels as they are at
the freeze — each person's value of each target and the leads' final values, the same
judgements the answer measures count — exported on each query's JSONL line
(``answer_judgements``) and in one workbook sheet per kind.

Each frozen target has a *gold* value: the lead's final value where there is one, else
the low median of the people's values (``numerics.answers.combine_values``, as the
measures take it)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from annotator.models import Membership, Query
from gold.models import GoldSet
from gold.parts import GoldPart
from numerics import answers as scales
from numerics.id_order import natural_key

from .models import AnswerAdjudication, AnswerJudgment, Aspect, GoldAnswerJudgment

# Each kind's level names, by value (``numerics.answers``).
LEVELS = {
    Aspect.NUGGET: scales.NUGGET_LEVELS,
    Aspect.SUPPORT: scales.SUPPORT_LEVELS,
    Aspect.NEEDS_CITATION: scales.NEEDS_LEVELS,
    Aspect.CRAG: scales.CRAG_LEVELS,
}
# The columns naming each kind's target in its workbook sheet (after qid and run).
TARGET_COLUMNS = {
    Aspect.NUGGET: ["nugget_id"],
    Aspect.SUPPORT: ["sentence", "citation", "doc_id", "start", "end"],
    Aspect.NEEDS_CITATION: ["sentence"],
    Aspect.CRAG: [],
}
ASPECT_ORDER = {aspect.value: i for i, aspect in enumerate(Aspect)}


def freeze(gold_set: GoldSet) -> None:
    """Copy the people's answer judgements and the leads' final values, as they are now,
    into ``gold_set`` (pseudo-annotators — assessor sets, judge versions — left out, as
    the measures leave them out)."""
    project = gold_set.project
    pseudo = Membership.objects.filter(project=project, is_pseudo=True).values("user_id")
    rows = [
        GoldAnswerJudgment(
            gold_set=gold_set,
            answer_id=j.answer_id,
            aspect=j.aspect,
            nugget_key=j.nugget.nugget_id if j.nugget_id else "",
            citation_id=j.citation_id,
            sentence_id=j.sentence_id,
            annotator=j.annotator.username,
            value=j.value,
        )
        for j in AnswerJudgment.objects.filter(answer__run__project=project)
        .exclude(annotator_id__in=pseudo)
        .select_related("annotator", "nugget")
        .iterator(chunk_size=5000)
    ]
    rows += [
        GoldAnswerJudgment(
            gold_set=gold_set,
            answer_id=a.answer_id,
            aspect=a.aspect,
            nugget_key=a.nugget.nugget_id if a.nugget_id else "",
            citation_id=a.citation_id,
            sentence_id=a.sentence_id,
            adjudicated=True,
            value=a.value,
        )
        for a in AnswerAdjudication.objects.filter(answer__run__project=project).select_related(
            "nugget"
        )
    ]
    GoldAnswerJudgment.objects.bulk_create(rows, batch_size=5000)


def _target(row: GoldAnswerJudgment) -> dict:
    """The JSON fields that name a frozen row's target within its answer."""
    if row.aspect == Aspect.NUGGET:
        return {"nugget_id": row.nugget_key}
    if row.aspect == Aspect.SUPPORT:
        citation = row.citation
        return {
            "sentence": citation.sentence.number,
            "citation": citation.number,
            "doc_id": citation.document.doc_id,
            "start": citation.start,
            "end": citation.end,
        }
    if row.aspect == Aspect.NEEDS_CITATION:
        return {"sentence": row.sentence.number}
    return {}


def _order(entry: dict, qid: str) -> tuple:
    return (
        natural_key(qid),
        entry["run"],
        ASPECT_ORDER[entry["aspect"]],
        natural_key(entry.get("nugget_id", "")),
        entry.get("sentence", 0),
        entry.get("citation", 0),
    )


def entries(gold_set: GoldSet, query_pks: list[int] | None = None) -> dict[int, list[dict]]:
    """Per query pk, its frozen answer judgements, one entry per target:
    ``{"run", "aspect", <target fields>, "judgements": {username: value},
    "adjudicated": value or null, "gold": value, "level": the gold value's name}`` —
    target fields ``nugget_id`` (nugget support), ``sentence``, ``citation``, ``doc_id``,
    ``start``, ``end`` (citation support), ``sentence`` (needs a citation), none (CRAG)."""
    rows = GoldAnswerJudgment.objects.filter(gold_set=gold_set).select_related(
        "answer__run", "answer__query", "citation__sentence", "citation__document", "sentence"
    )
    if query_pks is not None:
        rows = rows.filter(answer__query_id__in=query_pks)
    grouped: dict[tuple, dict] = {}
    for row in rows.order_by("id"):
        key = (row.answer_id, row.aspect, row.nugget_key, row.citation_id, row.sentence_id)
        entry = grouped.get(key)
        if entry is None:
            entry = grouped[key] = {
                "query": row.answer.query_id,
                "qid": row.answer.query.qid,
                "run": row.answer.run.name,
                "aspect": row.aspect,
                **_target(row),
                "judgements": {},
                "adjudicated": None,
            }
        if row.adjudicated:
            entry["adjudicated"] = row.value
        else:
            entry["judgements"][row.annotator] = row.value
    keys = list(grouped)
    target = [i for i, k in enumerate(keys) for _ in grouped[k]["judgements"]]
    value = [v for k in keys for v in grouped[k]["judgements"].values()]
    settled = [i for i, k in enumerate(keys) if grouped[k]["adjudicated"] is not None]
    gold = scales.combine_values(
        len(keys),
        np.array(target, dtype=np.int64),
        np.array(value, dtype=np.int64),
        np.array(settled, dtype=np.int64),
        np.array([grouped[keys[i]]["adjudicated"] for i in settled], dtype=np.int64),
    )
    found: dict[int, list[dict]] = defaultdict(list)
    for key, value in zip(keys, gold.tolist(), strict=True):
        entry = grouped[key]
        entry["gold"] = value
        entry["level"] = LEVELS[Aspect(entry["aspect"])][value]
        entry["judgements"] = dict(sorted(entry["judgements"].items()))
        found[entry.pop("query")].append(entry)
    for items in found.values():
        items.sort(key=lambda e: _order(e, e["qid"]))
        for item in items:
            item.pop("qid")
    return found


def _froze_any(gold_set: GoldSet) -> bool:
    return GoldAnswerJudgment.objects.filter(gold_set=gold_set).exists()


def fields(gold_set: GoldSet, query_pks: list[int]) -> dict[int, dict]:
    """When the set froze answer judgements, every exported query's line gains
    ``"answer_judgements"`` (empty for a query without); otherwise lines stay as they were."""
    if not _froze_any(gold_set):
        return {}
    found = entries(gold_set, query_pks)
    return {pk: {"answer_judgements": found.get(pk, [])} for pk in query_pks}


def sheets(gold_set: GoldSet) -> list[tuple[str, list, list[list]]]:
    """One workbook sheet per kind (``answers nugget``, ``answers support``,
    ``answers needs_citation``, ``answers crag``): a row per frozen target — qid, run, the
    target's columns, the gold value and its level, the lead's final value, then each
    person's value (one column per person who judged that kind). None when the set froze
    no answer judgements."""
    if not _froze_any(gold_set):
        return []
    found = entries(gold_set)
    qids = dict(Query.objects.filter(pk__in=list(found)).values_list("pk", "qid"))
    ordered = [
        (qids[pk], entry)
        for pk in sorted(found, key=lambda pk: natural_key(qids[pk]))
        for entry in found[pk]
    ]
    out = []
    for aspect in Aspect:
        mine = [(qid, e) for qid, e in ordered if e["aspect"] == aspect]
        people = sorted({name for _qid, e in mine for name in e["judgements"]})
        columns = TARGET_COLUMNS[aspect]
        header = ["qid", "run", *columns, "gold", "level", "adjudicated", *people]
        rows = [
            [
                qid,
                e["run"],
                *(e[c] for c in columns),
                e["gold"],
                e["level"],
                "" if e["adjudicated"] is None else e["adjudicated"],
                *(e["judgements"].get(name, "") for name in people),
            ]
            for qid, e in mine
        ]
        out.append((f"answers {aspect.value}", header, rows))
    return out


def _target_key(entry: dict) -> str:
    """The target within its answer, as the diff names it: the nugget id, the sentence
    and citation numbers (``2.1``), the sentence number, or nothing (the CRAG grade)."""
    if entry["aspect"] == Aspect.NUGGET:
        return entry["nugget_id"]
    if entry["aspect"] == Aspect.SUPPORT:
        return f"{entry['sentence']}.{entry['citation']}"
    if entry["aspect"] == Aspect.NEEDS_CITATION:
        return str(entry["sentence"])
    return ""


def _keyed(gold_set: GoldSet) -> dict[tuple, dict]:
    qids = {}
    found = entries(gold_set)
    for pk, qid in Query.objects.filter(pk__in=list(found)).values_list("pk", "qid"):
        qids[pk] = qid
    return {
        (qids[pk], e["run"], e["aspect"], _target_key(e)): e
        for pk, items in found.items()
        for e in items
    }


def _shown(entry: dict) -> dict:
    return {
        "gold": entry["gold"],
        "level": entry["level"],
        "adjudicated": entry["adjudicated"],
        "adjudicated_level": None
        if entry["adjudicated"] is None
        else LEVELS[Aspect(entry["aspect"])][entry["adjudicated"]],
        "judgements": entry["judgements"],
    }


def diff(old: GoldSet, new: GoldSet) -> dict:
    """The frozen answer judgements from ``old`` to ``new``, one row per answer and
    target (qid, run, aspect, target): targets judged only in ``new`` (added) or only in
    ``old`` (removed), and those whose gold value, lead's final value or people's values
    changed — ``what`` names which, ``people`` each person whose value changed (old, new;
    None where they had none). ``n_new - n_old == len(added) - len(removed)``;
    ``by_aspect`` counts the rows of each kind."""
    before, after = _keyed(old), _keyed(new)

    def ordered(keys):
        return sorted(
            keys,
            key=lambda k: (natural_key(k[0]), k[1], ASPECT_ORDER[k[2]], natural_key(k[3])),
        )

    def row(key) -> dict:
        qid, run, aspect, target = key
        return {"qid": qid, "run": run, "aspect": aspect, "target": target}

    changed = []
    for key in ordered(before.keys() & after.keys()):
        a, b = before[key], after[key]
        what = [
            name
            for name, differs in (
                ("gold", a["gold"] != b["gold"]),
                ("adjudicated", a["adjudicated"] != b["adjudicated"]),
                ("judgements", a["judgements"] != b["judgements"]),
            )
            if differs
        ]
        if what:
            people = {
                name: [a["judgements"].get(name), b["judgements"].get(name)]
                for name in sorted({*a["judgements"], *b["judgements"]})
                if a["judgements"].get(name) != b["judgements"].get(name)
            }
            changed.append(
                {**row(key), "what": what, "old": _shown(a), "new": _shown(b), "people": people}
            )
    added = [{**row(k), "new": _shown(after[k])} for k in ordered(after.keys() - before.keys())]
    removed = [{**row(k), "old": _shown(before[k])} for k in ordered(before.keys() - after.keys())]
    by_aspect = {
        aspect.value: {
            kind: sum(1 for r in rows if r["aspect"] == aspect)
            for kind, rows in (("added", added), ("removed", removed), ("changed", changed))
        }
        for aspect in Aspect
    }
    return {
        "n_old": len(before),
        "n_new": len(after),
        "added": added,
        "removed": removed,
        "changed": changed,
        "by_aspect": by_aspect,
    }


def queries(gold_set: GoldSet) -> set[int]:
    """The queries whose answers have frozen judgements: each gets its JSONL line, with or
    without relevance labels."""
    return set(
        GoldAnswerJudgment.objects.filter(gold_set=gold_set)
        .values_list("answer__query_id", flat=True)
        .distinct()
    )


PART = GoldPart("answers", freeze, fields, sheets=sheets, diff=diff, queries=queries)


def diff_section(*, diff, old, new) -> dict | None:
    """The gold diff page's answers section: only when either version froze some."""
    found = diff["parts"].get("answers")
    if not found or not (found["n_old"] or found["n_new"]):
        return None
    return {"diff": found}
