"""Nuggets in gold sets: frozen with the labels, exported on each query's line, in their own
workbook sheet, and compared between two versions like grades (``gold.parts``)."""

from __future__ import annotations

from collections import defaultdict

from annotator.models import Query
from gold.models import GoldSet
from gold.parts import GoldPart
from numerics.id_order import natural_key

from .models import GoldNugget
from .sources import document_ids, frozen_nuggets, live_nuggets


def freeze(gold_set: GoldSet) -> None:
    """Copy the project's nuggets, as they are now, into ``gold_set``."""
    rows = live_nuggets(gold_set.project)
    doc_ids = document_ids(rows.ev_document)
    evidence: dict[int, list[dict]] = defaultdict(list)
    for index, document, start, end in zip(
        rows.ev_nugget.tolist(),
        rows.ev_document.tolist(),
        rows.ev_start.tolist(),
        rows.ev_end.tolist(),
        strict=True,
    ):
        evidence[index].append({"doc_id": doc_ids[document], "start": start, "end": end})
    GoldNugget.objects.bulk_create(
        [
            GoldNugget(
                gold_set=gold_set,
                query_id=int(rows.query[i]),
                nugget_id=rows.nugget_id[i],
                text=rows.text[i],
                importance="vital" if rows.vital[i] else "okay",
                order=rows.order[i],
                author=rows.author[i],
                evidence=evidence.get(i, []),
            )
            for i in range(len(rows))
        ],
        batch_size=2000,
    )


def entries(gold_set: GoldSet, query_pks: list[int] | None = None) -> dict[int, list[dict]]:
    """Per query pk, its frozen nuggets as the gold JSONL writes them:
    ``{"id", "text", "importance", "evidence": [{"doc_id", "start", "end"}]}``."""
    rows = frozen_nuggets(gold_set)
    doc_ids = document_ids(rows.ev_document)
    evidence: dict[int, list[dict]] = defaultdict(list)
    for index, document, start, end in zip(
        rows.ev_nugget.tolist(),
        rows.ev_document.tolist(),
        rows.ev_start.tolist(),
        rows.ev_end.tolist(),
        strict=True,
    ):
        evidence[index].append({"doc_id": doc_ids.get(document, ""), "start": start, "end": end})
    wanted = None if query_pks is None else set(query_pks)
    found: dict[int, list[dict]] = defaultdict(list)
    for i in range(len(rows)):
        query_pk = int(rows.query[i])
        if wanted is not None and query_pk not in wanted:
            continue
        found[query_pk].append(
            {
                "id": rows.nugget_id[i],
                "text": rows.text[i],
                "importance": "vital" if rows.vital[i] else "okay",
                "evidence": sorted(
                    evidence.get(i, []), key=lambda e: (e["doc_id"], e["start"], e["end"])
                ),
            }
        )
    return found


def fields(gold_set: GoldSet, query_pks: list[int]) -> dict[int, dict]:
    """Every exported query's line gains ``"nuggets"`` (an empty list when it has none)."""
    found = entries(gold_set, query_pks)
    return {pk: {"nuggets": found.get(pk, [])} for pk in query_pks}


def sheet(gold_set: GoldSet) -> tuple[str, list, list[list]]:
    """The workbook's "nuggets" sheet: one row per evidence span, queries in natural order."""
    found = entries(gold_set)
    qids = dict(Query.objects.filter(pk__in=list(found)).values_list("pk", "qid"))
    rows = []
    for query_pk in sorted(found, key=lambda pk: natural_key(qids[pk])):
        for nugget in found[query_pk]:
            head = [qids[query_pk], nugget["id"], nugget["text"], nugget["importance"]]
            spans = nugget["evidence"] or [{"doc_id": "", "start": "", "end": ""}]
            rows += [[*head, e["doc_id"], e["start"], e["end"]] for e in spans]
    header = ["qid", "nugget_id", "text", "importance", "doc_id", "start", "end"]
    return "nuggets", header, rows


def diff(old: GoldSet, new: GoldSet) -> dict:
    """Nuggets added, removed and changed (text, importance or evidence) from ``old`` to
    ``new``, keyed by (query, nugget id): ``n_new - n_old == len(added) - len(removed)``."""
    before = {(pk, n["id"]): n for pk, items in entries(old).items() for n in items}
    after = {(pk, n["id"]): n for pk, items in entries(new).items() for n in items}
    qids = dict(
        Query.objects.filter(pk__in={k[0] for k in (*before, *after)}).values_list("pk", "qid")
    )

    def ordered(keys):
        return sorted(keys, key=lambda k: (natural_key(qids.get(k[0], "")), natural_key(k[1])))

    changed = []
    for key in ordered(before.keys() & after.keys()):
        what = [f for f in ("text", "importance", "evidence") if before[key][f] != after[key][f]]
        if what:
            changed.append(
                {
                    "qid": qids[key[0]],
                    "nugget_id": key[1],
                    "what": what,
                    "old": before[key],
                    "new": after[key],
                }
            )
    return {
        "n_old": len(before),
        "n_new": len(after),
        "added": [{"qid": qids[k[0]], **after[k]} for k in ordered(after.keys() - before.keys())],
        "removed": [
            {"qid": qids[k[0]], **before[k]} for k in ordered(before.keys() - after.keys())
        ],
        "changed": changed,
    }


PART = GoldPart("nuggets", freeze, fields, sheet, diff)
