"""Every coefficient of a label set at once, annotators named: the one report builder.

The agreement command (a labels file) and the agreement page (a project's labels mapped
to units) both code their labels as a ``Labels`` bundle and call ``build_report``; the
command's JSON object (and the page's reference in tests) is ``Report.as_json()``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .alpha import DISTANCES, LEVELS, alpha_batch, query_coincidences, total_coincidences
from .kappa import fleiss_kappa, pairwise, percent_agreement
from .table import Labels, check_domain, counts, item_agreement, labels, query_index
from .table import undefined_as_none as _none


def summary(data: Labels, *, domain_values=None) -> dict:
    """Every coefficient of a :class:`Labels` bundle: n_items (items with a label),
    n_annotators (annotators with a label), percent_agreement, fleiss_kappa,
    krippendorff_alpha per level, pairs (annotators by index)."""
    values = check_domain(data.n_categories, domain_values)
    n = counts(data)
    o = total_coincidences(n)
    return {
        "n_items": int(np.unique(data.item).size),
        "n_annotators": int(np.unique(data.annotator).size),
        "percent_agreement": percent_agreement(counts=n),
        "fleiss_kappa": fleiss_kappa(counts=n),
        "krippendorff_alpha": {
            level: _none(alpha_batch(o[None], DISTANCES[level], values)[0]) for level in LEVELS
        },
        "pairs": pairwise(data),
    }


def support(data: Labels) -> dict:
    """What the coefficients rest on: items with ≥ 2 labels (percent agreement, alpha) and
    the number of pairable values n of Krippendorff's alpha."""
    m = counts(data).sum(axis=1)
    multi = m >= 2
    return {"items_with_two_labels": int(multi.sum()), "pairable_values": int(m[multi].sum())}


def per_query(data: Labels, *, query, n_queries=None, domain_values=None) -> list[dict]:
    """For ``query[i]`` = item i's query index: one dict per query,
    {krippendorff_alpha: {nominal, ordinal, interval}, percent_agreement, n_items} with
    n_items the query's items holding ≥ 2 labels (what both coefficients rest on)."""
    query, n_queries = query_index(data.n_items, query, n_queries)
    values = check_domain(data.n_categories, domain_values)
    n = counts(data)
    o = query_coincidences(n, query, n_queries)
    alphas = {level: alpha_batch(o, DISTANCES[level], values) for level in LEVELS}
    share, multi = item_agreement(n)
    total = np.bincount(query, weights=share, minlength=n_queries)
    used = np.bincount(query, weights=multi.astype(float), minlength=n_queries)
    return [
        {
            "krippendorff_alpha": {level: _none(alphas[level][q]) for level in LEVELS},
            "percent_agreement": float(total[q] / used[q]) if used[q] else None,
            "n_items": int(used[q]),
        }
        for q in range(n_queries)
    ]


@dataclass(frozen=True)
class Report:
    """``summary`` with the pairs named and sorted by name; ``support``; ``per_query``: one
    {query, krippendorff_alpha, percent_agreement, n_items} per query key, in the order
    the keys were given."""

    summary: dict
    support: dict
    per_query: list[dict]

    def as_json(self) -> dict:
        """The agreement command's JSON object: the summary and, per query key, alpha and
        percent agreement."""
        return {
            **self.summary,
            "per_query": {
                row["query"]: {
                    "krippendorff_alpha": row["krippendorff_alpha"],
                    "percent_agreement": row["percent_agreement"],
                }
                for row in self.per_query
            },
        }


def build_report(
    data: Labels,
    *,
    annotators: Sequence[str],
    queries: Sequence[Hashable] = (),
    item_query=None,
    domain_values=None,
) -> Report:
    """The report of a label set: ``annotators[a]`` names annotator index a;
    ``item_query[i]`` is item i's index into ``queries``, or −1 for an item outside every
    query (it counts in the summary, in no query's row)."""
    if len(annotators) != data.n_annotators:
        raise ValueError("annotators needs one name per annotator index")
    result = summary(data, domain_values=domain_values)
    result["pairs"] = sorted(
        ({**p, "a": annotators[p["a"]], "b": annotators[p["b"]]} for p in result["pairs"]),
        key=lambda p: (p["a"], p["b"]),
    )
    rows: list[dict] = []
    if len(queries):
        item_query = np.asarray(item_query, dtype=np.int64).ravel()
        outside = len(queries)  # one more query, never reported, holds the items of none
        bucket = np.where(item_query < 0, outside, item_query)
        values = per_query(data, query=bucket, n_queries=outside + 1, domain_values=domain_values)
        rows = [{"query": key, **row} for key, row in zip(queries, values, strict=False)]
    return Report(result, support(data), rows)


def report_of_rows(rows: Sequence[dict], domain: Sequence[int]) -> Report:
    """The report of label rows {annotator, item, grade, query?} (ids as text, grades on
    the ordered integer scale ``domain``); annotators, items and queries in id order."""
    annotators = sorted({r["annotator"] for r in rows})
    items = sorted({r["item"] for r in rows})
    queries = sorted({r["query"] for r in rows if r.get("query") is not None})
    a_index = {a: i for i, a in enumerate(annotators)}
    i_index = {it: i for i, it in enumerate(items)}
    d_index = {g: i for i, g in enumerate(domain)}
    q_index = {q: i for i, q in enumerate(queries)}
    outside = [r["grade"] for r in rows if r["grade"] not in d_index]
    if outside:
        raise ValueError(f"grade {outside[0]} is outside the domain")
    data = labels(
        [i_index[r["item"]] for r in rows],
        [a_index[r["annotator"]] for r in rows],
        [d_index[r["grade"]] for r in rows],
        len(domain),
        n_items=len(items),
        n_annotators=len(annotators),
    )
    item_query = np.full(len(items), -1, dtype=np.int64)
    for r in rows:
        if r.get("query") is not None:
            item_query[i_index[r["item"]]] = q_index[r["query"]]
    return build_report(
        data,
        annotators=annotators,
        queries=queries,
        item_query=item_query,
        domain_values=list(domain),
    )


def agreement_report(rows: Sequence[dict], domain: Sequence[int]) -> dict:
    """The JSON object of the agreement command for checked label rows (see
    ``report_of_rows``)."""
    return report_of_rows(rows, domain).as_json()
