"""Answer-run pages: the dashboard of answer runs (each measure's mean), a run's answers
per query, and one answer's drill-down (each nugget's status, each citation's support).

Every view resolves the project through ``annotator.access.get_project_for_user``
(outsiders: 404); the numbers stand on everyone's live judgements and labels, so they are
for those who read live grades (``require_grades``; annotators judge blind).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotator.access import get_project_for_user, require_grades
from annotator.sources import SourcesError, source_choices
from api.metrics_views import _ids
from metrics.charts import delta_chart
from web.errors import BadParameters, answers_bad_parameters

from .agreement import agreement_section
from .api_views import requested_sources
from .comparison import chosen_answer_runs, chosen_measures, compare_answer_runs
from .metrics import MEASURES, answer_detail, answer_sources, run_scores
from .models import Answer, AnswerRun
from .presenting import MEASURE_LABELS, measure_columns


def _sources(request: HttpRequest, project):
    """The label sources asked (``?sources=``, people by default); a bad one: 400."""
    try:
        return requested_sources(request, project)
    except SourcesError as error:
        raise BadParameters(str(error)) from None


def _sources_context(project, sources) -> dict:
    """What the sources line and the sources picker show."""
    return {
        "sources": sources,
        "source_choices": source_choices(project),
        "sources_query": "" if sources.tokens == ("people",) else sources.text,
    }


@login_required
@require_GET
@answers_bad_parameters
def dashboard(request: HttpRequest, slug: str):
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    sources = _sources(request, project)
    rows = []
    for run in AnswerRun.objects.filter(project=project).active():
        summary = run_scores(run, sources).summary()
        rows.append({"run": run, "means": [summary[name] for name in MEASURES]})
    return TemplateResponse(
        request,
        "answers/dashboard.html",
        {
            "project": project,
            "membership": membership,
            "columns": measure_columns(),
            "rows": rows,
            "agreement": agreement_section(project=project, membership=membership),
            **_sources_context(project, sources),
        },
    )


@login_required
@require_GET
@answers_bad_parameters
def run_detail(request: HttpRequest, slug: str, pk: int):
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    run = get_object_or_404(AnswerRun, pk=pk, project=project)
    sources = _sources(request, project)
    scores = run_scores(run, sources)
    rows = [
        {"qid": row["qid"], "answer": row["answer"], "values": [row[m] for m in MEASURES]}
        for row in scores.per_query()
    ]
    summary = scores.summary()
    return TemplateResponse(
        request,
        "answers/run_detail.html",
        {
            "project": project,
            "membership": membership,
            "run": run,
            "columns": measure_columns(),
            "means": [summary[name] for name in MEASURES],
            "rows": rows,
            **_sources_context(project, sources),
        },
    )


@login_required
@require_GET
@answers_bad_parameters
def answer_view(request: HttpRequest, slug: str, pk: int, answer: int):
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    run = get_object_or_404(AnswerRun, pk=pk, project=project)
    found = get_object_or_404(Answer.objects.select_related("query", "run"), pk=answer, run=run)
    sources = _sources(request, project)
    detail = answer_detail(found, sources)
    return TemplateResponse(
        request,
        "answers/answer_detail.html",
        {
            "project": project,
            "membership": membership,
            "run": run,
            "answer": found,
            "detail": detail,
            "measures": [
                (label, detail["measures"].get(name)) for name, label in measure_columns()
            ],
            **_sources_context(project, sources),
        },
    )


@login_required
@require_GET
def compare(request: HttpRequest, slug: str):
    """Answer runs against a chosen baseline on the chosen measures
    (``?runs=<id>&runs=<id>&baseline=<id>&measure=<name>``), as the API's
    ``answers/compare/`` computes them; bad parameters: 400 with the reason."""
    project, membership = get_project_for_user(request, slug)
    require_grades(membership, None)
    ids = _ids(request.GET.getlist("runs"))
    baseline = request.GET.get("baseline", "").strip()
    try:
        sources, problem = requested_sources(request, project), ""
    except SourcesError as error:
        sources, problem = answer_sources(project), str(error)
    context = {
        "project": project,
        "membership": membership,
        "all_runs": AnswerRun.objects.filter(project=project).active(),
        "columns": measure_columns(),
        "selected": ids or [],
        "chosen": request.GET.getlist("measure"),
        "comparison": None,
        "problem": problem,
        **_sources_context(project, sources),
    }
    if problem:
        return TemplateResponse(request, "answers/compare.html", context, status=400)
    if ids is None or (baseline and not (baseline.isascii() and baseline.isdigit())):
        context["problem"] = _("Bad comparison parameters.")
        return TemplateResponse(request, "answers/compare.html", context, status=400)
    if not ids:
        return TemplateResponse(request, "answers/compare.html", context)
    try:
        names = chosen_measures(request.GET.getlist("measure"))
        runs = chosen_answer_runs(project, ids, int(baseline) if baseline else None)
    except BadParameters as error:
        context["problem"] = str(error)
        return TemplateResponse(request, "answers/compare.html", context, status=400)
    comparison = compare_answer_runs(runs, names, sources=sources)
    context |= {
        "comparison": comparison,
        "baseline": comparison.baseline,
        "chosen": names,
        "measures": [
            {
                "name": m.name,
                "label": MEASURE_LABELS[m.name],
                "queries": comparison.queries(m.name),
                "measure": m,
            }
            for m in comparison.measures
        ],
        "deltas": [
            {
                "run": run,
                "measure": name,
                "chart": delta_chart(
                    _("%(measure)s: %(run)s − %(baseline)s, per query")
                    % {
                        "measure": MEASURE_LABELS[name],
                        "run": run.name,
                        "baseline": comparison.baseline.name,
                    },
                    comparison.differences(run, name).tolist(),
                    str(MEASURE_LABELS[name]),
                ),
            }
            for name in names
            for run in comparison.others
        ],
    }
    return TemplateResponse(request, "answers/compare.html", context)
