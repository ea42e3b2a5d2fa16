"""Adjudication queue and gold sets. Every view resolves the project through the access helper."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import get_project_for_user
from annotator.labels import Evidence
from annotator.models import Document, Granularity, Query, Role
from web.downloads import attachment

from .export import FORMATS, build_export, export_filename, render_export
from .forms import (
    MAPPING_CHOICES,
    AdjudicateForm,
    DiffForm,
    ExportForm,
    FreezeForm,
    QueueFilterForm,
)
from .models import GoldSet
from .queue import DISAGREEMENT_RULES, disagreement_queue, queue_item
from .services import ConsensusPolicy, adjudicate, diff_gold_sets, freeze_gold_set
from .units import levels

ADJUDICATORS = (Role.OWNER, Role.ADJUDICATOR)


def _get_gold_set_for_user(request, slug: str, pk: int, *roles: str):
    project, membership = get_project_for_user(request, slug, *roles)
    return get_object_or_404(GoldSet, project=project, pk=pk), project, membership


@login_required
@require_GET
def adjudication_queue(request, slug: str):
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
    template = "gold/partials/queue_items.html" if request.htmx else "gold/queue.html"
    return render(request, template, context)


@login_required
@require_POST
def adjudicate_item(request, slug: str):
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
    if request.htmx:
        context = {
            "project": project,
            "item": item,
            "grade_labels": project.grade_labels,
            "saved": True,
        }
        return render(request, "gold/partials/queue_item.html", context)
    return redirect("gold:queue", slug=slug)


@login_required
@require_http_methods(["GET", "POST"])
def gold_set_list(request, slug: str):
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
    return render(request, "gold/gold_set_list.html", context)


@login_required
@require_GET
def gold_set_detail(request, slug: str, pk: int):
    gold_set, project, membership = _get_gold_set_for_user(request, slug, pk)
    form = DiffForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad comparison parameter."))
    diff = other = None
    if form.cleaned_data["against"]:
        other = get_object_or_404(GoldSet, project=project, pk=form.cleaned_data["against"])
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
        "versions": project.gold_sets.exclude(pk=gold_set.pk),
        "is_owner": membership.role == Role.OWNER,
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
    }
    template = "gold/partials/gold_diff.html" if request.htmx else "gold/gold_set_detail.html"
    return render(request, template, context)


@login_required
@require_POST
def gold_set_delete(request, slug: str, pk: int):
    gold_set, _project, _membership = _get_gold_set_for_user(request, slug, pk, Role.OWNER)
    gold_set.delete()
    return redirect("gold:list", slug=slug)


@login_required
@require_GET
def gold_set_export(request, slug: str, pk: int):
    """Download a gold set at a level (documents, pages or a chunking) in one format."""
    gold_set, project, _membership = _get_gold_set_for_user(request, slug, pk, Role.OWNER)
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
def agreement(request, slug: str):
    """Agreement of the project's annotators at a level, with readings and drill-downs."""
    from .agreement import project_agreement, read_alpha, read_kappa

    project, membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = ExportForm(
        {"level": "documents", "format": "jsonl", **request.GET.dict()}, levels=levels(project)
    )
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad agreement parameters."))
    level, mapping = form.cleaned_data["level"], form.cleaned_data["mapping"]
    report = project_agreement(project, level, mapping)
    summary = report.summary
    by_pair = {(p["a"], p["b"]): p for p in summary["pairs"]}

    def cell(a, b):
        pair = by_pair.get((a, b)) or by_pair.get((b, a))
        kappa = pair["cohen_kappa"] if pair and a != b else None
        # Heat: red (κ ≤ 0) to green (κ = 1); grey where undefined or on the diagonal.
        colour = f"hsl({120 * max(0.0, kappa):.0f}, 65%, 80%)" if kappa is not None else "#eee"
        return {
            "a": a,
            "b": b,
            "pair": pair if a != b else None,
            "kappa": kappa,
            "colour": colour,
            "reading": read_kappa(kappa),
        }

    matrix = [[cell(a, b) for b in report.annotators] for a in report.annotators]
    chosen = None
    if request.GET.get("a") and request.GET.get("b"):
        chosen = by_pair.get((request.GET["a"], request.GET["b"])) or by_pair.get(
            (request.GET["b"], request.GET["a"])
        )
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
        "matrix": matrix,
        "chosen": chosen,
        "grades": [0, 1, 2, 3],
        "level": level,
        "mapping": str(mapping),
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
    }
    template = "gold/partials/agreement_body.html" if request.htmx else "gold/agreement.html"
    return render(request, template, context)
