"""Retrieval measures: Assay's numpy engine against pytrec_eval, ranx and ir_measures.

    .venv/bin/python -m bench measures

A seeded synthetic collection: N_QUERIES queries × RESULTS results each, JUDGED judged
items per query with grades 0–3 (a fifth of them relevant at rank ≤ 100 on average), and
the measures P@10 R@100 nDCG@10 AP RR@10. Two settings:

- from memory: the inputs are already in each library's own structures (our integer
  arrays; pytrec_eval's and ir_measures' dicts; ranx's Qrels/Run, numba compiled
  beforehand); only the evaluation is timed;
- from files: a TREC run file and a qrels file on disk are read and evaluated.

Each figure is the median of REPEATS runs; ratios are against the fastest peer.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

N_QUERIES = 10_000
RESULTS = 1_000
JUDGED = 50
REPEATS = 5
MEASURES = ["P@10", "R@100", "nDCG@10", "AP", "RR@10"]
PYTREC_SET = {"P.10", "recall.100", "ndcg_cut.10", "map", "recip_rank"}
RANX = ["precision@10", "recall@100", "ndcg@10", "map", "mrr@10"]


def generate(seed: int = 7):
    rng = np.random.default_rng(seed)
    n_docs = 100_000
    run_query = np.repeat(np.arange(N_QUERIES), RESULTS)
    run_item = np.concatenate(
        [rng.choice(n_docs, RESULTS, replace=False) for _ in range(N_QUERIES)]
    )
    run_score = np.round(rng.random(run_query.size) * 1000, 3)  # float32-exact ties happen
    # As a retriever returns them (and TREC files list them): by query, best score first.
    order = np.lexsort((-run_score, run_query))
    run_item, run_score = run_item[order], run_score[order]
    qrel_query = np.repeat(np.arange(N_QUERIES), JUDGED)
    # Half the judged items come from the run's top 200, so measures are not all zero.
    picks = []
    for q in range(N_QUERIES):
        top = run_item[q * RESULTS : q * RESULTS + 200]
        pool = np.unique(
            np.concatenate(
                [
                    rng.choice(top, JUDGED // 2, replace=False),
                    rng.choice(n_docs, JUDGED, replace=False),
                ]
            )
        )
        picks.append(rng.permutation(pool)[:JUDGED])
    qrel_item = np.concatenate(picks)
    qrel_grade = rng.choice([0, 0, 0, 1, 2, 3], size=qrel_item.size)
    return run_query, run_item, run_score, qrel_query, qrel_item, qrel_grade


COLUMNS = ("run_query", "run_item", "run_score", "qrel_query", "qrel_item", "qrel_grade")


def as_dicts(run_query, run_item, run_score, qrel_query, qrel_item, qrel_grade):
    run, qrels = {}, {}
    for q, d, s in zip(run_query.tolist(), run_item.tolist(), run_score.tolist(), strict=True):
        run.setdefault(f"q{q}", {})[f"d{d:06d}"] = s
    for q, d, g in zip(qrel_query.tolist(), qrel_item.tolist(), qrel_grade.tolist(), strict=True):
        qrels.setdefault(f"q{q}", {})[f"d{d:06d}"] = g
    return run, qrels


def median_time(function, repeats=REPEATS) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    import ir_measures
    import pytrec_eval
    from ranx import Qrels, Run
    from ranx import evaluate as ranx_evaluate

    from formats import encode, read_qrels, read_run
    from numerics.measures import evaluate_arrays, evaluate_index, index_run, rank_order

    arrays = generate()
    run, qrels = as_dicts(*arrays)
    n = len(arrays[0])
    columns = dict(zip(COLUMNS, arrays, strict=True))
    ours_values = evaluate_arrays(**columns, n_queries=N_QUERIES, measures=MEASURES)

    def ours_memory():
        evaluate_arrays(**columns, n_queries=N_QUERIES, measures=MEASURES)

    # Runs stored in the database are kept in rank order, so dashboards skip the sort.
    order = rank_order(*arrays[:3])
    ranked_run = {name: columns[name][order] for name in COLUMNS[:3]}

    def ours_ranked():
        evaluate_arrays(**columns | ranked_run, n_queries=N_QUERIES, measures=MEASURES, ranked=True)

    # Dashboards go further: each run is ranked and indexed once (cached), and each
    # refresh joins the judgments against that index.
    index = index_run(*arrays[:3])

    def ours_indexed():
        evaluate_index(
            index,
            **{name: columns[name] for name in COLUMNS[3:]},
            query_keys=np.arange(N_QUERIES),
            measures=MEASURES,
        )

    def pytrec_memory():
        pytrec_eval.RelevanceEvaluator(qrels, PYTREC_SET).evaluate(run)

    ranx_qrels, ranx_run = Qrels(qrels), Run(run)
    started = time.perf_counter()
    ranx_evaluate(ranx_qrels, ranx_run, RANX)  # numba compiles here
    ranx_first = time.perf_counter() - started  # one run: JIT compilation included

    def ranx_memory():
        ranx_evaluate(ranx_qrels, ranx_run, RANX)

    ir_list = [
        ir_measures.parse_measure(m) for m in ["P@10", "R@100", "nDCG@10", "AP", "RR", "Success@10"]
    ]

    def ir_memory():
        ir_measures.calc_aggregate(ir_list, qrels, run)

    # Same numbers first: a benchmark of different answers would mean nothing.
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_SET).evaluate(run)
    # (RR@10 has no trec_eval twin: pytrec_eval computes recip_rank, a little more work.)
    for ours_name, their_name in zip(
        MEASURES[:4], ["P_10", "recall_100", "ndcg_cut_10", "map"], strict=True
    ):
        mean_theirs = np.mean([theirs[f"q{q}"][their_name] for q in range(N_QUERIES)])
        assert abs(ours_values[ours_name].mean() - mean_theirs) < 1e-9, ours_name
    indexed_values = evaluate_index(
        index,
        **{name: columns[name] for name in COLUMNS[3:]},
        query_keys=np.arange(N_QUERIES),
        measures=MEASURES,
    )
    assert all(np.array_equal(indexed_values[m], ours_values[m]) for m in MEASURES)

    rows = [
        ("from memory", "Assay (numpy)", median_time(ours_memory)),
        ("from memory", "Assay (numpy), run stored ranked", median_time(ours_ranked)),
        ("from memory", "Assay (numpy), run indexed once (dashboards)", median_time(ours_indexed)),
        ("from memory", "pytrec_eval", median_time(pytrec_memory)),
        ("from memory", "ranx (numba, warm)", median_time(ranx_memory)),
        ("from memory", "ranx (numba, first call: JIT included, 1 run)", ranx_first),
        ("from memory", "ir_measures", median_time(ir_memory, 3)),
    ]
    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = Path(folder) / "run.trec", Path(folder) / "qrels.txt"
        with run_path.open("w") as handle:
            for qid, ranked in run.items():
                for rank, (doc, score) in enumerate(ranked.items(), start=1):
                    handle.write(f"{qid} Q0 {doc} {rank} {score} bench\n")
        with qrels_path.open("w") as handle:
            for qid, judged in qrels.items():
                for doc, grade in judged.items():
                    handle.write(f"{qid} 0 {doc} {grade}\n")

        def ours_files():
            e = encode(read_qrels(qrels_path), read_run(run_path))
            evaluate_arrays(
                **{name: getattr(e, name) for name in COLUMNS},
                n_queries=len(e.qids),
                measures=MEASURES,
            )

        def pytrec_files():
            with qrels_path.open() as q, run_path.open() as r:
                evaluator = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q), PYTREC_SET)
                evaluator.evaluate(pytrec_eval.parse_run(r))

        def ranx_files():
            ranx_evaluate(
                Qrels.from_file(str(qrels_path), kind="trec"),
                Run.from_file(str(run_path), kind="trec"),
                RANX,
            )

        def ir_files():
            ir_measures.calc_aggregate(
                ir_list,
                ir_measures.read_trec_qrels(str(qrels_path)),
                ir_measures.read_trec_run(str(run_path)),
            )

        rows += [
            ("from files", "Assay (numpy)", median_time(ours_files)),
            ("from files", "pytrec_eval", median_time(pytrec_files)),
            ("from files", "ranx (numba, warm)", median_time(ranx_files)),
            ("from files", "ir_measures", median_time(ir_files, 3)),
        ]
    print(
        f"{N_QUERIES:,} queries × {RESULTS:,} results ({n:,} rows), {JUDGED} judged per "
        f"query; measures {' '.join(MEASURES)}; median of {REPEATS} runs (ir_measures 3)\n"
    )
    print("| setting | engine | seconds | ratio to fastest peer |")
    print("|---|---|---:|---:|")
    for setting in ("from memory", "from files"):
        group = [r for r in rows if r[0] == setting]
        fastest_peer = min(
            t for _, name, t in group if not name.startswith("Assay") and "JIT" not in name
        )
        for _, name, seconds in group:
            print(f"| {setting} | {name} | {seconds:.3f} | {seconds / fastest_peer:.2f} |")


if __name__ == "__main__":
    main()
