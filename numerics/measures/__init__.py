"""Retrieval measures, trec_eval-exact by default, vectorised over whole runs. Numpy only.

Inputs are arrays over *all* queries at once — a run as (query, item, score) rows and the
gold set as (query, item, grade) rows, queries numbered 0..n_queries-1 and items coded so
that code order equals id string order — and every measure is computed with sorting,
``searchsorted``, ``bincount`` and cumulative sums: no Python loop per query or result.

The package, in the shape of ir_measures:

- ``names``       the parsed ``Measure``, ``parse_measure`` and the one family registry;
- ``ranking``     trec_eval's order, the judged-rows join, ``RunIndex`` / ``index_run``;
- ``binary``      Success, P, R, F1, Judged, the set measures (SetP, SetR, SetF, SetAP)
                  and the counts;
- ``ranked``      RR, AP, Rprec, Bpref, infAP, IPrec (interpolated precision);
- ``ndcg``        nDCG;
- ``evaluation``  ``evaluate_arrays``, ``evaluate_index``, ``evaluate``;
- ``trec_eval``   trec_eval's names, parameters, averaging and output layout.

Conventions (trec_eval 9/10, ``trec_eval -c``), the same for every measure:

- within a query, results are ordered by score descending, ties broken by item id
  descending (string order); any rank column of the file is ignored
  (trec_eval ``form_res_rels.c``, ``comp_sim_docno``);
- an item is relevant when its grade ≥ ``rel`` (default 1); a negative grade means "in the
  pool, not judged": never relevant, not counted in R nor among judged non-relevant items;
- R (the number of relevant items) counts every judged relevant item of the query,
  retrieved or not; a query without relevant items scores 0 on every measure;
- means are taken over every query of the gold set, a query missing from the run counting
  0 (the caller may average over the run's queries only: trec_eval without ``-c``).

Other published conventions are available by name only, e.g. ``P(convention='retrieved')@5``;
``docs/measures.md`` sets them side by side with worked examples.
"""

from __future__ import annotations

# Importing the measure modules registers their families.
from . import binary, ndcg, ranked  # noqa: F401
from .evaluation import evaluate, evaluate_arrays, evaluate_index
from .names import ALIASES, FAMILIES, Family, Measure, family, measure_names, parse_measure
from .ranking import DuplicateResult, RunIndex, index_run, rank_order

MEASURE_NAMES: tuple[str, ...] = measure_names()

__all__ = [
    "ALIASES",
    "FAMILIES",
    "MEASURE_NAMES",
    "DuplicateResult",
    "Family",
    "Measure",
    "RunIndex",
    "evaluate",
    "evaluate_arrays",
    "evaluate_index",
    "family",
    "index_run",
    "measure_names",
    "parse_measure",
    "rank_order",
]
