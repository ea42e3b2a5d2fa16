"""Token endpoints a CI job reads and gates on: runs, gold sets, metrics, compare, gate.

They use the dashboard's own code: ``DashboardForm`` reads the setting (``level`` may be
``own``: each run at its own units), ``metrics.reports`` computes means, intervals and
the paired tests, so the API and the pages give the same numbers.
"""

from __future__ import annotations

import math

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from annotator.access import get_project_for_user, readable_gold_sets
from metrics import reports
from metrics.access import project_run
from metrics.evaluation import EvaluationSetting, evaluate_run
from metrics.figures import figures
from metrics.forms import DashboardForm
from metrics.models import Run

from .views import token_required, upload_run


def _run_json(run: Run) -> dict:
    return {
        "id": run.pk,
        "name": run.name,
        "level": run.chunking.name if run.chunking_id else "documents",
        "parameters": run.parameters,
        "tags": run.tags,
        "series": run.series,
        "archived": run.archived_at is not None,
        "results": run.n_results,
        "queries": run.n_queries,
        "dropped": run.n_dropped,
        "created_at": run.created_at.isoformat(),
    }


def _bad(message: str, **extra) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=400)


def _setting(request: HttpRequest, membership) -> EvaluationSetting | JsonResponse:
    form = DashboardForm(request.GET, membership=membership, remembered=False)
    if not form.is_valid():
        errors = {key: [str(e) for e in value] for key, value in form.errors.items()}
        return _bad("bad parameters", fields=errors)
    return form.setting()


def _ids(values: list[str]) -> list[int] | None:
    """Run ids given as ``runs=1,2`` or ``runs=1&runs=2``; None if any is not a number."""
    parts = [p.strip() for value in values for p in value.split(",") if p.strip()]
    return [int(p) for p in parts] if all(_is_id(p) for p in parts) else None


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 15


@csrf_exempt
def runs(request: HttpRequest, slug: str):
    """``GET``: the runs (any member); ``POST``: upload one (owners)."""
    return upload_run(request, slug) if request.method == "POST" else runs_list(request, slug)


@token_required
@require_GET
def runs_list(request: HttpRequest, slug: str) -> JsonResponse:
    """Every run of the project (``?archived=true`` to include archived ones)."""
    project, _membership = get_project_for_user(request, slug)
    runs = Run.objects.filter(project=project).select_related("chunking").without_results()
    if request.GET.get("archived") != "true":
        runs = runs.active()
    return JsonResponse({"runs": [_run_json(r) for r in runs]})


@token_required
@require_GET
def gold_list(request: HttpRequest, slug: str) -> JsonResponse:
    """The project's frozen gold sets this member may read (owners: all; others: released)."""
    project, membership = get_project_for_user(request, slug)
    return JsonResponse(
        {
            "gold_sets": [
                {
                    "id": g.pk,
                    "name": g.name,
                    "version": g.version,
                    "released": bool(g.released),
                    "created_at": g.created_at.isoformat(),
                }
                for g in readable_gold_sets(membership, project.gold_sets.all())
            ]
        }
    )


@token_required
@require_GET
def run_metrics(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Means with 95 % intervals, Judged@k and per-query values of one run:
    ``?level=own|documents|pages|<chunking>&k=&gold=live|<id>&mapping=&measure=...``."""
    project, membership = get_project_for_user(request, slug)
    run = project_run(project, pk)
    setting = _setting(request, membership)
    if isinstance(setting, JsonResponse):
        return setting
    if not setting.can_evaluate(run):
        return _bad("this run cannot be evaluated at that level")
    at = setting.for_run(run)
    scores = evaluate_run(run, at.gold, [*at.names, at.judged])
    return JsonResponse(
        {
            "run": _run_json(run),
            "level": at.level,
            "requested_level": setting.level,
            "k": at.k,
            "gold": at.gold.description,
            "units": len(at.gold.units.ids),
            "queries": len(at.gold.query_pks),
            "mean": {n: scores.mean(n) for n in at.names},
            "interval": {n: scores.interval(n) for n in at.names},
            "judged": scores.mean(at.judged),
            "per_query": {
                qid: {n: float(scores.values[n][i]) for n in at.names}
                for i, qid in enumerate(at.gold.qids)
            },
            # Figures other apps add (``metrics.figures``: "nuggets" …), when they have any.
            **{
                found.name: value
                for found in figures()
                if (value := found.api(setting, run)) is not None
            },
        }
    )


def _comparison(request: HttpRequest, slug: str, ids: list[int], baseline_pk: int):
    """(setting, comparison) for the runs against the baseline, or an error response."""
    project, membership = get_project_for_user(request, slug)
    setting = _setting(request, membership)
    if isinstance(setting, JsonResponse):
        return setting
    runs = [project_run(project, pk) for pk in dict.fromkeys([baseline_pk, *ids])]
    if any(not setting.can_evaluate(run) for run in runs):
        return _bad("a run cannot be evaluated at that level")
    if len(runs) < 2:
        return _bad("compare at least one run with the baseline")
    return setting, reports.comparison(runs, runs[0], setting, setting.names, setting.names[0])


def _row_json(row: dict) -> dict:
    return {
        "id": row["run"].pk,
        "name": row["run"].name,
        "mean": row["mean"],
        "delta": row["delta"],
        "delta_interval": [row["low"], row["high"]] if row["low"] is not None else None,
        "wins": row["wtl"][0],
        "ties": row["wtl"][1],
        "losses": row["wtl"][2],
        "p_randomization": row["p_randomization"],
        "p_t": row["p_t"],
        "p_holm": row["p_holm"],
        "significant": row["significant"],
    }


@token_required
@require_GET
def compare(request: HttpRequest, slug: str) -> JsonResponse:
    """Runs against a baseline: ``?runs=<id>,<id>&baseline=<id>&measure=...`` (the first
    run is the baseline when none is named); p-values Holm-corrected per measure."""
    ids = _ids(request.GET.getlist("runs"))
    baseline = request.GET.get("baseline", "")
    if not ids or (baseline and not _is_id(baseline)):
        return _bad("name the runs to compare: runs=<id>,<id>[&baseline=<id>]")
    result = _comparison(request, slug, ids, int(baseline) if baseline else ids[0])
    if isinstance(result, JsonResponse):
        return result
    setting, comparison = result
    return JsonResponse(
        {
            "baseline": {"id": comparison["baseline"].pk, "name": comparison["baseline"].name},
            "level": setting.level,
            "k": setting.k,
            "gold": setting.gold.description,
            "queries": comparison["n_queries"],
            "correction": "holm per measure, over the runs compared with the baseline",
            "measures": {
                m["name"]: {
                    "baseline_mean": m["base_mean"],
                    "runs": [_row_json(r) for r in m["rows"]],
                }
                for m in comparison["measures"]
            },
        }
    )


@token_required
@require_GET
def gate(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Pass or fail a run against a baseline: ``?baseline=<id>&measure=nDCG@10&max_drop=0.01
    [&alpha=0.05]``, several measure/max_drop pairs allowed. A measure fails when its mean
    drops by more than ``max_drop``, or (with ``alpha``) when the run is worse and the
    paired randomization test's p is below alpha. 200 with ``"pass": true``, else 422."""
    measures = request.GET.getlist("measure")
    drops = request.GET.getlist("max_drop")
    baseline = request.GET.get("baseline", "")
    alpha_text = request.GET.get("alpha", "")
    try:
        max_drops = [float(d) for d in drops]
        alpha = float(alpha_text) if alpha_text else None
    except ValueError:
        return _bad("max_drop and alpha must be numbers")
    if not all(math.isfinite(x) for x in [*max_drops, *([alpha] if alpha is not None else [])]):
        return _bad("max_drop and alpha must be finite numbers")
    if not _is_id(baseline) or not measures:
        return _bad("name a baseline and at least one measure")
    if (max_drops and len(max_drops) != len(measures)) or (not max_drops and alpha is None):
        return _bad("give one max_drop per measure, or alpha")
    if any(d < 0 for d in max_drops) or (alpha is not None and not 0 < alpha < 1):
        return _bad("max_drop must be ≥ 0 and alpha in (0, 1)")
    if int(baseline) == pk:
        return _bad("the run and the baseline must differ")
    result = _comparison(request, slug, [pk], int(baseline))
    if isinstance(result, JsonResponse):
        return result
    setting, comparison = result
    checks = []
    for index, measure in enumerate(comparison["measures"]):
        row = measure["rows"][0]
        reasons = []
        limit = max_drops[index] if max_drops else None
        if limit is not None and row["delta"] < -limit:
            reasons.append(f"{measure['name']} dropped by {-row['delta']:.4f} > {limit}")
        p = row["p_randomization"]
        if alpha is not None and row["delta"] < 0 and p is not None and p < alpha:
            reasons.append(f"{measure['name']} is significantly worse (p = {p:.4g} < {alpha})")
        checks.append(
            {
                "measure": measure["name"],
                "run_mean": row["mean"],
                "baseline_mean": measure["base_mean"],
                "delta": row["delta"],
                "delta_interval": [row["low"], row["high"]] if row["low"] is not None else None,
                "p_randomization": p,
                "p_t": row["p_t"],
                "max_drop": limit,
                "alpha": alpha,
                "pass": not reasons,
                "reasons": reasons,
            }
        )
    passed = all(c["pass"] for c in checks)
    body = {
        "pass": passed,
        "run": {"id": pk, "name": comparison["measures"][0]["rows"][0]["run"].name},
        "baseline": {"id": comparison["baseline"].pk, "name": comparison["baseline"].name},
        "level": setting.level,
        "k": setting.k,
        "gold": setting.gold.description,
        "queries": comparison["n_queries"],
        "checks": checks,
        "failing": [c for c in checks if not c["pass"]],
    }
    return JsonResponse(body, status=200 if passed else 422)
