"""A dashboard's gold and runs as the lines of TREC files: what ``evaluate`` reads back."""

from __future__ import annotations

import json

import numpy as np

from annotator.models import Query
from formats.trec import qrels_lines
from formats.values import as_token
from gold.units import Units

from .evaluation import Gold
from .models import Run
from .rankings import ranked_run


def run_lines(run: Run, gold: Gold) -> list[str]:
    """The run as TREC lines at the gold's level, in its ranking (what ``evaluate`` reads)."""
    return unit_run_lines(run, gold.units)


def unit_run_lines(run: Run, units: Units, format: str = "trec") -> list[str]:
    """The run at the units' level, in its ranking: TREC lines, or (``jsonl``) one line
    per query ``{"qid", "retrieved", "scores"}``."""
    ranked = ranked_run(run, units)
    qids = dict(Query.objects.filter(project_id=run.project_id).values_list("pk", "qid"))
    if format == "jsonl":
        return [
            json.dumps(
                {
                    "qid": qids[int(q)],
                    "retrieved": [str(units.ids[int(u)]) for u in ranked.item[rows]],
                    "scores": [float(x) for x in ranked.score[rows]],
                },
                ensure_ascii=False,
            )
            for q, rows in ((q, ranked.rows(int(q))) for q in ranked.query)
        ]
    query_pk = ranked.row_query
    rank = np.arange(query_pk.size) - np.repeat(ranked.bounds[:-1], np.diff(ranked.bounds)) + 1
    tag = run.name.replace(" ", "_") or "run"
    return [
        f"{qids[int(q)]} Q0 {as_token(str(units.ids[int(u)]))} {int(r)} {float(s)!r} {tag}"
        for q, u, s, r in zip(query_pk, ranked.item, ranked.score, rank, strict=True)
    ]


def gold_qrels_lines(gold: Gold) -> list[str]:
    """The gold's grades as TREC qrels lines (``formats.trec.qrels_lines``)."""
    return qrels_lines(
        (gold.qids[q], str(gold.units.ids[u]), int(g))
        for q, u, g in zip(
            np.searchsorted(gold.query_pks, gold.grades.query).tolist(),
            gold.grades.unit.tolist(),
            gold.grades.grade.tolist(),
            strict=True,
        )
    )
