"""Adjudication queue, gold sets and agreement. Every view resolves the project through the
access helper, and a gold set's grades (diff, export) through ``reads_gold_set``; htmx
requests get the page's partial through ``for_htmx``."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import (
    get_project_for_user,
    readable_gold_sets,
    reads_gold_set,
    require_grades,
)
from annotator.labels import Evidence
from annotator.models import Document, Granularity, Membership, Project, Query, Role
from numerics.grades import GRADES
from web.downloads import attachment
from web.htmx import for_htmx

from .agreement import chosen_pair, pair_matrix, project_agreement, read_alpha, read_kappa
from .export import FORMATS, build_export, export_filename, render_export
from .forms import (
    MAPPING_CHOICES,
    AdjudicateForm,
    DiffForm,
    ExportForm,
    FreezeForm,
    QueueFilterForm,
    ReleaseForm,
)
from .models import GoldSet
from .queue import DISAGREEMENT_RULES, disagreement_queue, queue_item
from .services import ConsensusPolicy, adjudicate, diff_gold_sets, freeze_gold_set
from .units import levels

ADJUDICATORS = (Role.OWNER, Role.ADJUDICATOR)


def _get_gold_set_for_user(
    request: HttpRequest, slug: str, pk: int, *roles: str
) -> tuple[GoldSet, Project, Membership]:
    project, membership = get_project_for_user(request, slug, *roles)
    return get_object_or_404(GoldSet, project=project, pk=pk), project, membership


def _get_readable_gold_set_for_user(
    request: HttpRequest, slug: str, pk: int
) -> tuple[GoldSet, Project, Membership]:
    """The gold set if the member may read its grades (``reads_gold_set``), else 403."""
    gold_set, project, membership = _get_gold_set_for_user(request, slug, pk)
    require_grades(membership, gold_set)
    return gold_set, project, membership


@login_required
@require_GET
@for_htmx("gold/partials/queue_items.html")
def adjudication_queue(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = QueueFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad filter parameters."))
    items = disagreement_queue(
        project,
        form.cleaned_data["rule"],
        include_pseudo=form.cleaned_data["pseudo"],
        unresolved_only=form.cleaned_data["unresolved"],
    )
    context = {
        "project": project,
        "membership": membership,
        "items": items,
        "form": form,
        "rules": DISAGREEMENT_RULES,
        "grade_labels": project.grade_labels,
    }
    return TemplateResponse(request, "gold/queue.html", context)


@login_required
@require_POST
def adjudicate_item(request: HttpRequest, slug: str) -> HttpResponse:
    project, _membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = AdjudicateForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(
            _("Bad adjudication: %(errors)s") % {"errors": form.errors.as_text()}
        )
    data = form.cleaned_data
    query = get_object_or_404(Query, project=project, pk=data["query"])
    document = get_object_or_404(Document, project=project, pk=data["document"])
    item = queue_item(query, data["granularity"], document, data["start"], data["end"])
    if item is None:
        return HttpResponseBadRequest(_("Nobody labelled this evidence for this query."))
    chunk = item.chunk if data["granularity"] == Granularity.CHUNK else None
    evidence = Evidence(data["granularity"], document, data["start"], data["end"], chunk)
    item.adjudication = adjudicate(
        query=query,
        evidence=evidence,
        grade=data["grade"],
        reason=data["reason"],
        adjudicator=request.user,
    )
    if not request.htmx:  # a plain form post: post/redirect/get back to the queue
        return redirect("gold:queue", slug=slug)
    context = {
        "project": project,
        "item": item,
        "grade_labels": project.grade_labels,
        "saved": True,
    }
    return TemplateResponse(request, "gold/partials/queue_item.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def gold_set_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    can_freeze = membership.role in ADJUDICATORS
    form = FreezeForm()
    if request.method == "POST":
        if not can_freeze:
            raise PermissionDenied(_("Only owners and adjudicators freeze gold sets."))
        form = FreezeForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            gold_set = freeze_gold_set(
                project,
                data["name"],
                note=data["note"],
                created_by=request.user,
                policy=ConsensusPolicy(
                    data["rule"], data["min_annotators"], data["adjudicated_first"]
                ),
            )
            return redirect("gold:detail", slug=slug, pk=gold_set.pk)
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "can_freeze": can_freeze,
        "gold_sets": project.gold_sets.select_related("created_by"),
    }
    return TemplateResponse(request, "gold/gold_set_list.html", context)


@login_required
@require_GET
@for_htmx("gold/partials/gold_diff.html")
def gold_set_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    gold_set, project, membership = _get_gold_set_for_user(request, slug, pk)
    form = DiffForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad comparison parameter."))
    diff = other = None
    if form.cleaned_data["against"]:
        other = get_object_or_404(GoldSet, project=project, pk=form.cleaned_data["against"])
        require_grades(membership, gold_set)  # a diff shows both versions' grades
        require_grades(membership, other)
        diff = diff_gold_sets(other, gold_set)
        queries = dict(project.queries.values_list("pk", "qid"))
        documents = dict(project.documents.values_list("pk", "doc_id"))
        for rows in diff.values():
            for row in rows:
                row["qid"] = queries.get(row["query"])
                row["doc_id"] = documents.get(row["document"])
    context = {
        "project": project,
        "membership": membership,
        "gold_set": gold_set,
        "diff": diff,
        "other": other,
        "versions": readable_gold_sets(membership, project.gold_sets.exclude(pk=gold_set.pk)),
        "is_owner": membership.role == Role.OWNER,
        "reads_grades": reads_gold_set(membership, gold_set),
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
    }
    return TemplateResponse(request, "gold/gold_set_detail.html", context)


@login_required
@require_POST
def gold_set_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    gold_set, _project, _membership = _get_gold_set_for_user(request, slug, pk, Role.OWNER)
    gold_set.delete()
    return redirect("gold:list", slug=slug)


@login_required
@require_POST
def gold_set_release(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Release a gold set to the team (``released=1``) or withdraw it (``released=0``)."""
    gold_set, _project, _membership = _get_gold_set_for_user(request, slug, pk, Role.OWNER)
    form = ReleaseForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad release parameter."))
    gold_set.set_released(form.cleaned_data["released"] == "1")
    return redirect("gold:detail", slug=slug, pk=gold_set.pk)


@login_required
@require_GET
def gold_set_export(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Download a gold set at a level (documents, pages or a chunking) in one format."""
    gold_set, project, _membership = _get_readable_gold_set_for_user(request, slug, pk)
    form = ExportForm(
        {"level": "documents", "format": "jsonl", **request.GET.dict()}, levels=levels(project)
    )
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad export parameters."))
    data = form.cleaned_data
    export = build_export(gold_set, data["level"], data["mapping"])
    return attachment(
        render_export(export, data["format"]),
        FORMATS[data["format"]][0],
        export_filename(export, data["format"]),
    )


@login_required
@require_GET
@for_htmx("gold/partials/agreement_body.html")
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    """Agreement of the project's annotators at a level, with readings and drill-downs."""
    project, membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = ExportForm(
        {"level": "documents", "format": "jsonl", **request.GET.dict()}, levels=levels(project)
    )
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad agreement parameters."))
    level, mapping = form.cleaned_data["level"], form.cleaned_data["mapping"]
    report = project_agreement(project, level, mapping)
    summary = report.summary
    context = {
        "project": project,
        "membership": membership,
        "report": report,
        "summary": summary,
        "alpha_readings": {
            level_name: read_alpha(value)
            for level_name, value in summary["krippendorff_alpha"].items()
        },
        "fleiss_reading": read_kappa(summary["fleiss_kappa"]["value"]),
        "matrix": pair_matrix(report.annotators, summary["pairs"]),
        "chosen": chosen_pair(summary["pairs"], request.GET.get("a"), request.GET.get("b")),
        "grades": list(GRADES),
        "level": level,
        "mapping": str(mapping),
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
    }
    return TemplateResponse(request, "gold/agreement.html", context)
