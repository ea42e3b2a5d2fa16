"""Adjudication queue, gold sets and agreement. Every view resolves the project through the
access helper, and a gold set's grades (diff, export) through ``reads_gold_set``; htmx
requests get the page's partial through ``for_htmx``."""

from __future__ import annotations

from django.contrib import messages
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
from annotator.models import Membership, Project, Query, Role
from annotator.sources import SourcesError
from numerics.grades import GRADES
from quality.models import QualityDimension
from web.downloads import attachment
from web.errors import answers_bad_parameters
from web.htmx import for_htmx
from web.pages import page_of
from web.sections import sections

from .agreement import (
    chosen_pair,
    confusion_table,
    pair_matrix,
    project_agreement,
    read_alpha,
    read_kappa,
)
from .disagreements import (
    DISAGREEMENT_RULES,
    compared_annotators,
    disagreement_file,
    disagreements,
)
from .export import FORMATS, build_export, export_filename, render_export
from .forms import (
    MAPPING_CHOICES,
    AdjudicateForm,
    DiffForm,
    ExportForm,
    FreezeForm,
    LevelForm,
    QueueFilterForm,
    ReleaseForm,
)
from .models import GoldSet
from .policy import SelectionError, people, pseudo_annotators, resolve_mapping
from .queue import adjudication_queue as adjudication_queue_items
from .queue import by_query, disputed_units, queue_items, unit_evidence
from .services import ConsensusPolicy, adjudicate, freeze_gold_set, gold_policy, preview_gold_set
from .units import level_units, levels, unit_index
from .versions import diff_gold_sets

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


def _queue_form(request: HttpRequest, project: Project, data) -> QueueFilterForm | None:
    form_class = AdjudicateForm if request.method == "POST" else QueueFilterForm
    form = form_class(data, levels=levels(project))
    return form if form.is_valid() else None


def _queue_options(data: dict) -> dict:
    return {
        "mapping": data["mapping"],
        "rule": data["rule"],
        "include_pseudo": data["pseudo"],
        "sources": data["sources"],
    }


QUEUE_QUERIES = 20  # queries (with all their disputed units) per page of the queue


@login_required
@require_GET
@for_htmx("gold/partials/queue_items.html")
@answers_bad_parameters
def adjudication_queue(request: HttpRequest, slug: str) -> HttpResponse:
    """Disputed units of a level, grouped by query, unresolved first."""
    project, membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = _queue_form(request, project, request.GET)
    if form is None:
        return HttpResponseBadRequest(_("Bad filter parameters."))
    data = form.cleaned_data
    units = level_units(project, data["level"])
    found = disputed_units(
        project,
        data["level"],
        units=units,
        unresolved_only=data["unresolved"],
        **_queue_options(data),
    )
    # A page of queries with their disputed units: every unit of a large project at once
    # took seconds to draw (thousands of highlighted texts); the texts and evidence are
    # read for the page's units alone.
    page = page_of(request, by_query(found), per_page=QUEUE_QUERIES)
    shown = [d for group in page.object_list for d in group]
    groups = _by_query(queue_items(project, data["level"], units, shown))
    context = {
        "project": project,
        "membership": membership,
        "n_disputed": len(found),
        "groups": groups,
        "page": page,
        "form": form,
        "filters": _filters(project, data),
        "rules": DISAGREEMENT_RULES,
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
        "grade_labels": project.shown_grade_labels,
        "has_quality": QualityDimension.objects.filter(project=project).exists(),
    }
    return TemplateResponse(request, "gold/queue.html", context)


def _by_query(items: list) -> list[tuple]:
    """(query, its items) in the queue's order."""
    groups: list[tuple] = []
    for item in items:
        if not groups or groups[-1][0].pk != item.query.pk:
            groups.append((item.query, []))
        groups[-1][1].append(item)
    return groups


def _filters(project: Project, data: dict) -> dict:
    """The queue's filter values, carried by every resolve form and the download link."""
    return {
        "level": data["level"],
        "mapping": str(resolve_mapping(project, None, data["mapping"])),
        "rule": data["rule"],
        "pseudo": "1" if data["pseudo"] else "",
        "sources": data["sources"] or "",
    }


@login_required
@require_GET
def disagreements_download(request: HttpRequest, slug: str) -> HttpResponse:
    """The queue's disputed units as JSONL or CSV (``manage.py disagreements``' rows)."""
    project, _membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = _queue_form(request, project, request.GET)
    if form is None:
        return HttpResponseBadRequest(_("Bad filter parameters."))
    data = form.cleaned_data
    fmt = data["format"] or "jsonl"
    options = _queue_options(data)
    try:
        rows = disagreements(project, data["level"], **options)
        _names, sources = compared_annotators(
            project, include_pseudo=options["include_pseudo"], sources=options["sources"]
        )
    except SourcesError as error:
        return HttpResponseBadRequest(str(error))
    policy = {
        "sources": sources.names,
        "level": data["level"],
        "rule": options["rule"],
        "mapping": str(resolve_mapping(project, None, options["mapping"])),
    }
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    return attachment(
        disagreement_file(rows, fmt),
        f"{content_type}; charset=utf-8",
        f"{project.slug}-disagreements-{data['level']}.{fmt}",
        policy=policy,
    )


@login_required
@require_POST
def adjudicate_item(request: HttpRequest, slug: str) -> HttpResponse:
    """Resolve one disputed unit with a grade and a reason (kept in history)."""
    project, _membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = _queue_form(request, project, request.POST)
    if form is None:
        form = AdjudicateForm(request.POST, levels=levels(project))
        form.is_valid()
        return HttpResponseBadRequest(
            _("Bad adjudication: %(errors)s") % {"errors": form.errors.as_text()}
        )
    data = form.cleaned_data
    query = get_object_or_404(Query, project=project, pk=data["query"])
    units = level_units(project, data["level"])
    index = unit_index(units, data["unit"])
    if index is None:
        return HttpResponseBadRequest(_("No such unit at this level."))
    adjudicate(
        query=query,
        evidence=unit_evidence(project, units, index),
        grade=data["grade"],
        reason=data["reason"],
        adjudicator=request.user,
    )
    if not request.htmx:  # a plain form post: post/redirect/get back to the queue
        return redirect("gold:queue", slug=slug)
    items = adjudication_queue_items(
        project, data["level"], units=units, query=query, unit=index, **_queue_options(data)
    )
    if not items:
        return HttpResponse("")
    context = {
        "project": project,
        "item": items[0],
        "filters": _filters(project, data),
        "grade_labels": project.shown_grade_labels,
        "saved": True,
    }
    return TemplateResponse(request, "gold/partials/queue_item.html", context)


def _freeze_form(project: Project, data=None) -> FreezeForm:
    names = [(name, name) for name in people(project)]
    names += [(name, f"{name} ({_('imported')})") for name in pseudo_annotators(project)]
    return FreezeForm(data, annotators=names)


def _recorded_policy(project: Project, form: FreezeForm) -> dict | None:
    """The policy the form asks for, or None with the form's error set."""
    data = form.cleaned_data
    try:
        return gold_policy(
            project,
            ConsensusPolicy(data["rule"], data["min_annotators"], data["adjudicated_first"]),
            data["annotators"] or None,
            data["mapping"],
            data["sources"] or None,
        )
    except SourcesError as error:
        form.add_error("sources", str(error))
        return None
    except SelectionError as error:
        form.add_error("annotators", str(error))
        return None


@login_required
@require_http_methods(["GET", "POST"])
@answers_bad_parameters
def gold_set_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The versions; leads preview and freeze a new one from chosen annotators."""
    project, membership = get_project_for_user(request, slug)
    gold_sets = page_of(request, project.gold_sets.select_related("created_by"))
    can_freeze = membership.role in ADJUDICATORS
    form = _freeze_form(project)
    preview = policy = None
    if request.method == "POST":
        if not can_freeze:
            raise PermissionDenied(_("Only owners and adjudicators freeze gold sets."))
        form = _freeze_form(project, request.POST)
        if form.is_valid() and (policy := _recorded_policy(project, form)) is not None:
            if "preview" in request.POST:
                preview = preview_gold_set(project, policy)
            else:
                data = form.cleaned_data
                gold_set = freeze_gold_set(
                    project,
                    data["name"],
                    note=data["note"],
                    created_by=request.user,
                    policy=ConsensusPolicy(
                        data["rule"], data["min_annotators"], data["adjudicated_first"]
                    ),
                    annotators=data["annotators"] or None,
                    mapping=data["mapping"],
                    sources=data["sources"] or None,
                )
                return redirect("gold:detail", slug=slug, pk=gold_set.pk)
    context = {
        "project": project,
        "membership": membership,
        "form": form,
        "can_freeze": can_freeze,
        "preview": preview,
        "preview_policy": policy,
        "gold_sets": gold_sets.object_list,
        "page": gold_sets,
    }
    status = 400 if request.method == "POST" and form.errors else 200
    return TemplateResponse(request, "gold/gold_set_list.html", context, status=status)


@login_required
@require_GET
@for_htmx("gold/partials/gold_diff.html")
def gold_set_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    gold_set, project, membership = _get_gold_set_for_user(request, slug, pk)
    form = DiffForm(request.GET, levels=levels(project))
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad comparison parameter."))
    diff = other = None
    level = form.cleaned_data["level"]
    if form.cleaned_data["against"]:
        other = get_object_or_404(GoldSet, project=project, pk=form.cleaned_data["against"])
        require_grades(membership, gold_set)  # a diff shows both versions' grades
        require_grades(membership, other)
        diff = diff_gold_sets(other, gold_set, level=level, mapping=form.cleaned_data["mapping"])
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
        "level": level,
        "mappings": MAPPING_CHOICES,
        # Sections of the diff from the gold set's other parts (nuggets …).
        "diff_sections": sections("gold_diff", diff=diff, old=other, new=gold_set)
        if diff is not None
        else [],
    }
    return TemplateResponse(request, "gold/gold_set_detail.html", context)


@login_required
@require_POST
def gold_set_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Delete a version for good, once the owner ticked that they mean it."""
    gold_set, _project, _membership = _get_gold_set_for_user(request, slug, pk, Role.OWNER)
    if request.POST.get("confirm") != "yes":
        messages.error(request, _("Not deleted: tick the box to confirm first."))
        return redirect("gold:detail", slug=slug, pk=pk)
    gold_set.delete()
    messages.success(request, _("Gold set version deleted."))
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
        policy=export.policy,
    )


@login_required
@require_GET
@for_htmx("gold/partials/agreement_body.html")
@answers_bad_parameters
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    """Agreement of the project's annotators at a level, with readings and drill-downs."""
    project, membership = get_project_for_user(request, slug, *ADJUDICATORS)
    form = LevelForm(request.GET, levels=levels(project))
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad agreement parameters."))
    level, mapping = form.cleaned_data["level"], form.cleaned_data["mapping"]
    mapping = resolve_mapping(project, None, mapping)
    try:
        report = project_agreement(project, level, mapping, form.cleaned_data["sources"])
    except SourcesError as error:
        return HttpResponseBadRequest(str(error))
    summary = report.summary
    chosen = chosen_pair(summary["pairs"], request.GET.get("a"), request.GET.get("b"))
    # The per-query table pages (worst agreement first): a row per query of a large
    # project took most of the page's time to draw.
    per_query = page_of(request, report.per_query)
    context = {
        "project": project,
        "membership": membership,
        "report": report,
        "per_query": per_query.object_list,
        "page": per_query,
        "summary": summary,
        "alpha_readings": {
            level_name: read_alpha(value)
            for level_name, value in summary["krippendorff_alpha"].items()
        },
        "fleiss_reading": read_kappa(summary["fleiss_kappa"]["value"]),
        "matrix": pair_matrix(report.annotators, summary["pairs"]),
        "chosen": chosen,
        "confusion": confusion_table(chosen) if chosen else None,
        "grades": list(GRADES),
        "level": level,
        "mapping": str(mapping),
        "levels": levels(project),
        "mappings": MAPPING_CHOICES,
        # What other apps compare between annotators (nuggets between two leads …).
        "sections": sections(
            "agreement", project=project, membership=membership, params=request.GET
        ),
        "sources": report.sources,
    }
    return TemplateResponse(request, "gold/agreement.html", context)
