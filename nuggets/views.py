"""Nugget pages: a query's nuggets (read, and written by leads through one change form), the
project's overview with its setting, and downloads.

Every view resolves the project through ``annotator.access.get_project_for_user``
(outsiders: 404) and asks ``nuggets.access`` who may read or write. A change answers with
the panel again (htmx swaps it in place), saying what was done or why nothing was.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import get_project_for_user, readable_gold_sets, require_grades
from annotator.models import Document, Query, Role
from annotator.problems import shown
from gold.models import GoldSet
from gold.units import check_level
from judges.models import Judge
from judges.services import JudgeError
from web.downloads import attachment, safe_filename
from web.htmx import for_htmx

from . import changes, proposals
from .access import reads_project_nuggets, require_edit, require_read
from .changes import NuggetRejected, Span
from .exporting import CONTENT_TYPES, build_nugget_export, render
from .forms import NuggetChangeForm, NuggetExportForm, NuggetSettingForm, ProposeForm
from .models import Nugget, NuggetProposal, NuggetSetting
from .panels import panel_context
from .proposal_jobs import plan_proposals, start_proposals


def _span(query: Query, data: dict) -> Span | None:
    """The passage a form names (a document of the query's project), checked against the
    text the browser selected."""
    if data.get("document") is None:
        return None
    document = get_object_or_404(Document, pk=data["document"], project_id=query.project_id)
    return changes.check_span(document, data["start"], data["end"], data.get("selected") or None)


def _nugget(query: Query, pk: int | None) -> Nugget:
    return get_object_or_404(Nugget, pk=pk, query=query)


def apply_change(query: Query, data: dict, user) -> str:
    """Make the change the form asks for; what to tell the lead."""
    action, version = data["action"], data.get("version")
    if action in ("accept", "reject"):
        proposal = get_object_or_404(NuggetProposal, pk=data["proposal"], query=query)
        edited = action == "accept" and (
            (data["text"] and data["text"].strip() != proposal.text)
            or (data["importance"] and data["importance"] != proposal.importance)
        )
        decided = proposals.decide(
            proposal,
            "edit" if edited else action,
            by=user,
            text=data["text"] or None,
            importance=data["importance"] or None,
        )
        if action == "reject":
            return _("Proposal rejected.")
        return _("Proposal accepted as nugget %(id)s.") % {"id": decided.nugget.nugget_id}
    span = _span(query, data)
    if action == "create":
        nugget = changes.create_nugget(
            query,
            text=data["text"],
            importance=data["importance"],
            evidence=[span] if span else [],
            changed_by=user,
        )
        return _("Nugget %(id)s added.") % {"id": nugget.nugget_id}
    nugget = _nugget(query, data["nugget"])
    if action == "edit":
        changes.edit_nugget(
            nugget,
            changed_by=user,
            text=data["text"] or None,
            importance=data["importance"] or None,
            version=version,
        )
    elif action == "link":
        changes.edit_nugget(nugget, changed_by=user, add=[span], version=version)
        return _("Passage linked to nugget %(id)s.") % {"id": nugget.nugget_id}
    elif action == "unlink":
        changes.edit_nugget(nugget, changed_by=user, remove=[data["evidence"]], version=version)
    elif action == "move":
        changes.move_nugget(nugget, data["position"], changed_by=user, version=version)
    elif action == "merge":
        target = _nugget(query, data["into"])
        changes.merge_nuggets(target, [nugget], changed_by=user)
        return _("Nugget %(a)s merged into %(b)s.") % {"a": nugget.nugget_id, "b": target.nugget_id}
    elif action == "delete":
        changes.delete_nugget(nugget, changed_by=user, version=version)
        return _("Nugget %(id)s deleted.") % {"id": nugget.nugget_id}
    return _("Nugget %(id)s saved.") % {"id": nugget.nugget_id}


@login_required
@require_http_methods(["GET", "POST"])
@for_htmx("nuggets/partials/panel.html")
def query_nuggets(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """GET: the query's nuggets. POST (leads): one change, answered with the panel."""
    project, membership = get_project_for_user(request, slug)
    query = get_object_or_404(Query, project=project, pk=pk)
    require_read(membership, query)
    screen = request.POST.get("screen") or request.GET.get("screen") or "query"
    screen = screen if screen in ("query", "labelling") else "query"
    message, error, status = "", "", 200
    if request.method == "POST":
        require_edit(membership)
        form = NuggetChangeForm(request.POST)
        if not form.is_valid():
            error = " ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
            status = 400
        else:
            try:
                message = apply_change(query, form.cleaned_data, request.user)
            except NuggetRejected as rejected:
                error, status = rejected.message(), rejected.status
        if request.htmx and status != 200:
            status = 200  # htmx swaps the panel, which says why nothing was saved
    context = panel_context(membership, query, screen=screen, message=message, error=error)
    context |= {"membership": membership, "section": context}
    return TemplateResponse(request, "nuggets/query_nuggets.html", context, status=status)


@login_required
@require_POST
def propose(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Owners (who configure judges and pay for their calls): ask a judge to propose the
    query's nuggets, as a job; its page follows it. Nothing to ask: the page says why."""
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    query = get_object_or_404(Query, project=project, pk=pk)
    form = ProposeForm(request.POST)
    error = ""
    if not form.is_valid():
        error = " ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items())
    else:
        judge = get_object_or_404(Judge, project=project, pk=form.cleaned_data["judge"])
        try:
            plan = plan_proposals(judge, qids=[query.qid], max_nuggets=form.cleaned_data["max"])
        except JudgeError as problem:
            error = shown(problem.problem)
        else:
            if plan.asked:
                job = start_proposals(plan, created_by=request.user)
                return redirect("judges:job", slug=project.slug, job_pk=job.pk)
            if plan.already:
                error = _("This judge version has proposed nuggets for this query already.")
            else:
                error = shown(proposals.NO_PASSAGES(qid=query.qid))
    context = panel_context(membership, query, error=error)
    context |= {"membership": membership, "section": context}
    return TemplateResponse(request, "nuggets/query_nuggets.html", context, status=400)


@login_required
@require_GET
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's queries with their nuggets counted; the setting; downloads."""
    project, membership = get_project_for_user(request, slug)
    if not reads_project_nuggets(membership):
        require_edit(membership)  # annotators: 403 with the reason
    queries = (
        Query.objects.filter(project=project)
        .annotate(
            n_nuggets=Count("nuggets", distinct=True),
            n_vital=Count("nuggets", filter=Q(nuggets__importance="vital"), distinct=True),
        )
        .filter(n_nuggets__gt=0)
        .order_by("pk")
    )
    setting = NuggetSetting.objects.filter(project=project).first()
    context = {
        "project": project,
        "membership": membership,
        "queries": queries,
        "n_queries": Query.objects.filter(project=project).count(),
        "n_nuggets": Nugget.objects.in_project(project).count(),
        "annotators_see": bool(setting and setting.annotators_see),
        "is_owner": membership.role == Role.OWNER,
        "gold_sets": readable_gold_sets(membership, project.gold_sets.all()),
        "formats": ["jsonl", "csv", "xlsx"],
    }
    return TemplateResponse(request, "nuggets/overview.html", context)


@login_required
@require_POST
def setting(request: HttpRequest, slug: str) -> HttpResponse:
    """Owners: whether annotators read the nuggets (read-only, after labelling)."""
    project, _membership = get_project_for_user(request, slug, Role.OWNER)
    form = NuggetSettingForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad setting."))
    NuggetSetting.objects.update_or_create(
        project=project, defaults={"annotators_see": form.cleaned_data["annotators_see"]}
    )
    return redirect("nuggets:overview", slug=slug)


@login_required
@require_GET
def export(request: HttpRequest, slug: str) -> HttpResponse:
    """The nuggets as a file: live (those who read them) or a gold set's (its readers)."""
    project, membership = get_project_for_user(request, slug)
    form = NuggetExportForm(request.GET)
    if not form.is_valid():
        return HttpResponseBadRequest(_("Bad export parameters."))
    data = form.cleaned_data
    gold_set = None
    if data["gold"]:
        gold_set = get_object_or_404(GoldSet, project=project, pk=data["gold"])
        require_grades(membership, gold_set)
    elif not reads_project_nuggets(membership):
        require_edit(membership)
    level = data["level"] or ("documents" if data["format"] == "ndeval" else None)
    if level is not None:
        try:
            check_level(project, level)
        except ValueError:
            return HttpResponseBadRequest(_("No such level."))
    exported = build_nugget_export(project, gold_set=gold_set, level=level)
    name = f"{project.slug}-nuggets" + (f"-{gold_set.name}-v{gold_set.version}" if gold_set else "")
    suffix = "qrels" if data["format"] == "ndeval" else data["format"]
    return attachment(
        render(exported, data["format"]),
        CONTENT_TYPES[data["format"]],
        safe_filename(f"{name}.{suffix}"),
    )
