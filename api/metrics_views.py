"""Token endpoints a CI job reads and gates on: runs, gold sets, metrics, compare, gate.

They use the dashboard's own code: ``DashboardForm`` reads the setting (``level`` may be
``own``: each run at its own units), ``metrics.compared`` chooses the runs and compares
them, ``metrics.gate`` holds the gate's parameters and rule, so the API and the pages
give the same numbers and the same answers.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

from annotator.access import get_project_for_user, readable_gold_sets, require_grades
from metrics.access import project_run
from metrics.compared import chosen_runs, compare_runs
from metrics.coverage import run_coverage
from metrics.evaluation import EvaluationSetting, evaluate_run, gold_set_sources
from metrics.figures import figures
from metrics.forms import DashboardForm, SourceRankingForm
from metrics.gate import GateForm, check_json
from metrics.gate import gate as run_gate
from metrics.models import Run
from metrics.source_rankings import compare_sources
from numerics.comparison import SEED, Versus
from web.errors import BadParameters

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
                    "sources": gold_set_sources(g),
                    "created_at": g.created_at.isoformat(),
                }
                for g in readable_gold_sets(membership, project.gold_sets.all())
            ]
        }
    )


@token_required
@require_GET
def run_metrics(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Means with 95 % intervals, Judged@k, coverage by source and per-query values of one
    run: ``?level=own|documents|pages|<chunking>&k=&gold=live|<id>&mapping=&measure=...
    &sources=people,assessors``."""
    project, membership = get_project_for_user(request, slug)
    run = project_run(project, pk)
    setting = _setting(request, membership)
    if isinstance(setting, JsonResponse):
        return setting
    if not setting.can_evaluate(run):
        return _bad("this run cannot be evaluated at that level")
    at = setting.for_run(run)
    scores = evaluate_run(run, at.gold, [*at.names, at.judged])
    coverage = run_coverage(run, at.gold, at.k)
    return JsonResponse(
        {
            "sources": at.source_names,
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
            "coverage": coverage.mean,
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
            "per_query_coverage": {qid: coverage.at(i) for i, qid in enumerate(at.gold.qids)},
        }
    )


def _comparison(request: HttpRequest, slug: str, ids: list[int], baseline_pk: int | None):
    """(setting, comparison) of the runs against the baseline, or an error response: the
    runs are chosen as the comparison page chooses them (``metrics.compared``)."""
    project, membership = get_project_for_user(request, slug)
    setting = _setting(request, membership)
    if isinstance(setting, JsonResponse):
        return setting
    try:
        runs = chosen_runs(project, setting, ids, baseline_pk)
    except BadParameters as error:
        return _bad(str(error))
    return setting, compare_runs(runs, setting, setting.names)


def _row_json(row: Versus) -> dict:
    return {
        "id": row.run.pk,
        "name": row.run.name,
        "mean": row.mean,
        "delta": row.delta,
        "delta_interval": list(row.interval) if row.interval else None,
        "wins": row.wins,
        "ties": row.ties,
        "losses": row.losses,
        "p_randomization": row.p_randomization,
        "p_holm": row.p_holm,
        "p_t": row.p_t,
        "p_t_holm": row.p_t_holm,
        "significant": row.significant,
        "significant_t": row.significant_t,
    }


def compared_json(comparison, per_measure=lambda measure: {}) -> dict:
    """How the runs compare with the baseline, retrieval and answer runs alike: the test's
    settings and each measure's baseline mean and runs (``per_measure`` adds a measure's
    own fields first)."""
    return {
        "alpha": comparison.alpha,
        "seed": SEED,
        "correction": "holm per measure, over the runs compared with the baseline",
        "measures": {
            m.name: {
                **per_measure(m),
                "baseline_mean": m.baseline_mean,
                "runs": [_row_json(r) for r in m.rows],
            }
            for m in comparison.measures
        },
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
    result = _comparison(request, slug, ids, int(baseline) if baseline else None)
    if isinstance(result, JsonResponse):
        return result
    setting, comparison = result
    return JsonResponse(
        {
            "sources": setting.source_names,
            "baseline": {"id": comparison.baseline.pk, "name": comparison.baseline.name},
            "level": setting.level,
            "k": setting.k,
            "gold": setting.gold.description,
            "queries": comparison.n_queries,
            **compared_json(comparison),
        }
    )


@token_required
@require_GET
def gate(request: HttpRequest, slug: str, pk: int) -> JsonResponse:
    """Pass or fail a run against a baseline (``metrics.gate``): 200 with ``"pass":
    true``, else 422, the figures in the body either way."""
    form = GateForm(request.GET, run_pk=pk)
    if not form.is_valid():
        return _bad(form.message())
    params = form.cleaned_data
    result = _comparison(request, slug, [pk], params["baseline"])
    if isinstance(result, JsonResponse):
        return result
    setting, comparison = result
    outcome = run_gate(comparison, params["max_drops"], params["alpha"])
    checks = [check_json(c) for c in outcome.checks]
    body = {
        "sources": setting.source_names,
        "pass": outcome.passed,
        "run": {"id": pk, "name": comparison.others[0].name},
        "baseline": {"id": comparison.baseline.pk, "name": comparison.baseline.name},
        "level": setting.level,
        "k": setting.k,
        "gold": setting.gold.description,
        "queries": comparison.n_queries,
        "checks": checks,
        "failing": [c for c in checks if not c["pass"]],
    }
    return JsonResponse(body, status=200 if outcome.passed else 422)


@token_required
@require_GET
def sources_compare(request: HttpRequest, slug: str) -> JsonResponse:
    """Runs ranked under two sets of label sources: ``?a=people,assessors&b=judge:x
    &measure=nDCG@10[&level=&k=&mapping=]``: Kendall's τ and τ_AP, the flipped pairs,
    per-query Pearson and Spearman, each run's means (readers of the live labels)."""
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    data = request.GET.copy()
    data.setdefault("a", "people,assessors")
    form = SourceRankingForm(data, project=project)
    if not form.is_valid():
        errors = {key: [str(e) for e in value] for key, value in form.errors.items()}
        return _bad("bad parameters", fields=errors)
    data = form.cleaned_data
    result = compare_sources(project, data["a"], data["b"], data["measure"], **form.options())
    return JsonResponse(result.as_json())
