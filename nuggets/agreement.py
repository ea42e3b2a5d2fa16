"""Agreement on nuggets between two leads who wrote them independently: a nugget of one is
matched when a nugget of the other, on the same query, shares a character of evidence
(``numerics.nuggets.matched_nuggets``); the share matched, each way, over the queries both
wrote nuggets for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.models import Project, Query
from numerics.nuggets import NuggetSpans, matched_nuggets
from numerics.spans import SpanArrays

from .sources import NuggetRows, live_nuggets


@dataclass(frozen=True)
class NuggetAgreement:
    """``a_matched`` of ``a_total`` nuggets of lead ``a`` are matched by ``b``'s (and the
    other way round), on the ``n_queries`` queries both wrote nuggets for."""

    a: str
    b: str
    n_queries: int
    a_total: int
    a_matched: int
    b_total: int
    b_matched: int
    per_query: list[dict]

    @property
    def a_share(self) -> float | None:
        return self.a_matched / self.a_total if self.a_total else None

    @property
    def b_share(self) -> float | None:
        return self.b_matched / self.b_total if self.b_total else None


def authors(rows: NuggetRows) -> list[str]:
    """The people who wrote the nuggets, by how many they wrote (most first)."""
    names, counts = np.unique([a for a in rows.author if a], return_counts=True)
    return [str(n) for _c, n in sorted(zip(-counts, names, strict=True))]


def _spans(rows: NuggetRows) -> NuggetSpans:
    return NuggetSpans(
        rows.query, rows.ev_nugget, SpanArrays(rows.ev_document, rows.ev_start, rows.ev_end)
    )


def nugget_agreement(project: Project, a: str, b: str, rows: NuggetRows | None = None):
    """How far the nuggets of leads ``a`` and ``b`` (usernames) match on the queries both
    wrote nuggets for (see the module docstring)."""
    rows = rows if rows is not None else live_nuggets(project)
    author = np.array(rows.author, dtype=object)
    both = np.intersect1d(rows.query[author == a], rows.query[author == b])
    mine = rows.take((author == a) & np.isin(rows.query, both))
    theirs = rows.take((author == b) & np.isin(rows.query, both))
    a_hit, b_hit = matched_nuggets(_spans(mine), _spans(theirs))
    qids = dict(Query.objects.filter(pk__in=both.tolist()).values_list("pk", "qid"))
    per_query = [
        {
            "query_pk": int(q),
            "qid": qids[int(q)],
            "a_total": int((mine.query == q).sum()),
            "a_matched": int(a_hit[mine.query == q].sum()),
            "b_total": int((theirs.query == q).sum()),
            "b_matched": int(b_hit[theirs.query == q].sum()),
        }
        for q in both.tolist()
    ]
    return NuggetAgreement(
        a, b, int(both.size), len(mine), int(a_hit.sum()), len(theirs), int(b_hit.sum()), per_query
    )


def agreement_section(*, project, membership, params) -> dict | None:
    """The agreement page's section: two leads (``nugget_a``, ``nugget_b`` in the URL;
    by default the two who wrote most), their shares and the queries."""
    rows = live_nuggets(project)
    names = authors(rows)
    if len(names) < 2:
        return None
    a = params.get("nugget_a") if params.get("nugget_a") in names else names[0]
    b = params.get("nugget_b") if params.get("nugget_b") in names else names[1]
    if a == b:
        b = next(n for n in names if n != a)
    return {
        "project": project,
        "level": params.get("level", ""),
        "mapping": params.get("mapping", ""),
        "authors": names,
        "result": nugget_agreement(project, a, b, rows),
    }
