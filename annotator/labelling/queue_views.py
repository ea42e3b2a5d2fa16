"""The work screens: the annotator's queue, the owners' assignments, one query's queue status."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_htmx.http import HttpResponseClientRedirect

from web.htmx import for_htmx

from .. import assignments as work
from ..models import Assignment, AssignmentStatus, Membership, Role
from ..queue_order import ordered
from .forms import AssignForm, QueueFilterForm, StatusForm
from .screen import Screen, bad_request, duration, member_view, text_error

QUEUE_PAGE_SIZE = 50


@for_htmx("annotator/partials/label_queue_table.html")
@member_view("GET")
def queue(request: HttpRequest, screen: Screen) -> HttpResponse:
    """The user's assigned queries, filtered by status, with progress and the next one."""
    form = QueueFilterForm(request.GET)
    if not form.is_valid():
        return bad_request(form)
    status = form.cleaned_data["status"]
    project, user = screen.project, screen.user
    items = Assignment.objects.filter(project=project, annotator=user).select_related("query")
    if status:
        items = items.filter(status=status)
    items = items.order_by("query_id")
    order = form.cleaned_data["order"]
    if order:  # a registered order (e.g. where an LLM judge disagrees with people first)
        rows = list(items)
        queries = ordered(screen.membership, [a.query_id for a in rows], order)
        rank = {pk: i for i, pk in enumerate(queries)}
        items = sorted(rows, key=lambda a: rank[a.query_id])
    page = Paginator(items, QUEUE_PAGE_SIZE).get_page(form.cleaned_data["page"] or 1)
    for item in page.object_list:
        item.time_display = duration(item.time_spent_seconds)
    progress = work.progress(project, user)
    context = screen.context(
        page=page,
        status=status,
        statuses=AssignmentStatus.choices,
        order=order,
        orders=form.fields["order"].choices[1:],
        progress=progress,
        progress_time=duration(progress.seconds),
        next_assignment=work.next_open(project, user),
    )
    return TemplateResponse(request, "annotator/queue.html", context)


# ------------------------------------------------------------------ assignments


def _assign_context(screen: Screen, form: AssignForm | None = None, **extra) -> dict:
    project = screen.project
    people = list(work.labellers(project))
    if form is None:
        annotators = set(
            Membership.objects.filter(project=project, role=Role.ANNOTATOR).values_list(
                "user_id", flat=True
            )
        )
        form = AssignForm(
            annotators=people,
            tags=work.project_tags(project),
            initial={"annotators": [u.pk for u in people if u.pk in annotators]},
        )
    team = work.team_progress(project)
    for row in team:
        row["time_display"] = duration(row["seconds"] or 0)
    return screen.context(
        form=form,
        team=team,
        n_queries=project.queries.count(),
        n_unassigned=project.queries.filter(assignments__isnull=True).count(),
        can_assign=screen.membership.role == Role.OWNER,
        **extra,
    )


ASSIGN_PAGE = "annotator/assign.html"
ASSIGN_FORM = "annotator/partials/label_assign_form.html"
# The regions of the page that fetch themselves again after "assignments-changed".
ASSIGN_REGIONS = {
    "assign-summary": "annotator/partials/label_assign_summary.html",
    "assign-team": "annotator/partials/label_assign_team.html",
}


@member_view("GET", "POST")
def assign(request: HttpRequest, screen: Screen) -> HttpResponse:
    """Owners give queries to annotators; every member sees the team's progress.

    htmx posts answer with the form alone (its errors, a question, or the outcome and an
    ``assignments-changed`` event that the summary line and the team table listen to).
    """
    if request.method == "GET":
        template = ASSIGN_PAGE
        if request.htmx:
            template = ASSIGN_REGIONS.get(request.htmx.target, ASSIGN_REGIONS["assign-team"])
        return TemplateResponse(request, template, _assign_context(screen))
    if screen.membership.role != Role.OWNER:
        raise PermissionDenied(_("Only the project's owners assign work."))
    project = screen.project
    template = ASSIGN_FORM if request.htmx else ASSIGN_PAGE
    form = AssignForm(
        request.POST, annotators=list(work.labellers(project)), tags=work.project_tags(project)
    )
    if form.is_valid() and form.cleaned_data["scope"] == "qids":
        qids = form.cleaned_data["qid_list"]
        known = set(project.queries.filter(qid__in=qids).values_list("qid", flat=True))
        unknown = [q for q in qids if q not in known]
        if unknown:
            message = _("Unknown query ids: %(ids)s") % {"ids": ", ".join(unknown[:20])}
            form.add_error("qids", message)
    if not form.is_valid():
        return TemplateResponse(request, template, _assign_context(screen, form), status=400)
    data = form.cleaned_data
    if data["mode"] == "remove" and data["scope"] == "all" and not data["confirm"]:
        context = _assign_context(screen, form, confirm_all=project.queries.count())
        return TemplateResponse(request, template, context)
    message = _apply_assignment(screen, data)
    if not request.htmx:  # post, then redirect: a reload does not assign twice
        messages.success(request, message)
        return redirect("annotator:assign", slug=project.slug)
    response = TemplateResponse(request, template, _assign_context(screen, message=message))
    response["HX-Trigger"] = "assignments-changed"
    return response


def _apply_assignment(screen: Screen, data: dict) -> str:
    project, annotators = screen.project, data["annotators"]
    query_ids = work.select_queries(
        project,
        tag=data["tag"] if data["scope"] == "tag" else "",
        qids=data.get("qid_list", []) if data["scope"] == "qids" else (),
    )
    if data["mode"] == "remove":
        n = work.unassign(project, query_ids, annotators)
        what = ngettext(
            "%(n)d unfinished assignment taken back",
            "%(n)d unfinished assignments taken back",
            n,
        )
    else:
        if data["mode"] == "even":
            n = work.assign_evenly(project, query_ids, annotators, data["per_query"], screen.user)
        else:
            n = work.assign_each(project, query_ids, annotators, screen.user)
        what = ngettext("%(n)d assignment added", "%(n)d assignments added", n)
    queries = ngettext("%(q)d query", "%(q)d queries", len(query_ids)) % {"q": len(query_ids)}
    return _("%(what)s (%(queries)s).") % {"what": what % {"n": n}, "queries": queries}


# ------------------------------------------------------------------ one query's status


@member_view("GET", "POST")
def label_query_status(request: HttpRequest, screen: Screen) -> HttpResponse:
    """The query's place in the user's queue: skip with a reason, done, reopen, time."""
    if request.method == "GET":
        return TemplateResponse(request, "annotator/partials/label_status.html", screen.context())
    screen.require_labeller()
    form = StatusForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    assignment = screen.assignment
    seconds = work.clamp_seconds(data.get("elapsed"))
    if data["action"] == "time":
        work.add_time(assignment, seconds)
        return HttpResponse(status=204)
    if data["action"] == "claim":  # anyone who labels may take on a query they found
        work.assign_each(screen.project, [screen.query.pk], [screen.user.pk], screen.user)
        fresh = Screen(request, screen.project, screen.membership, screen.query)
        if request.htmx:
            return TemplateResponse(
                request, "annotator/partials/label_status.html", fresh.context()
            )
        return redirect("annotator:label_query", slug=screen.project.slug, pk=screen.query.pk)
    if assignment is None:
        return text_error(_("This query is not in your queue."))
    unjudged = None
    if data["action"] == "done":
        unjudged = sum(not card.judged for card in screen.candidates)
        if unjudged and not data["confirm"]:
            work.add_time(assignment, seconds)
            return _confirm_done(request, screen, unjudged)
    with transaction.atomic():
        work.add_time(assignment, seconds)
        if data["action"] == "skip":
            work.set_status(assignment, AssignmentStatus.SKIPPED, reason=data["reason"])
        elif data["action"] == "done":
            work.set_status(assignment, AssignmentStatus.DONE, unjudged=unjudged)
        else:
            work.set_status(assignment, AssignmentStatus.OPEN)
    project, query = screen.project, screen.query
    if data["action"] == "reopen":
        assignment.refresh_from_db(fields=["time_spent_seconds"])
        if request.htmx:
            return TemplateResponse(
                request, "annotator/partials/label_status.html", screen.context()
            )
        return redirect("annotator:label_query", slug=project.slug, pk=query.pk)
    nxt = work.next_open(project, screen.user, after=query)
    target = (
        reverse("annotator:label_query", args=[project.slug, nxt.query_id])
        if nxt is not None
        else reverse("annotator:queue", args=[project.slug])
    )
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


def _confirm_done(request: HttpRequest, screen: Screen, unjudged: int) -> HttpResponse:
    """ "Done" with unjudged candidates: ask first (the status region, or the whole screen)."""
    if request.htmx:
        context = screen.context(confirm_unjudged=unjudged)
        return TemplateResponse(request, "annotator/partials/label_status.html", context)
    context = screen.context(
        cards=screen.candidates, n_judged=screen.n_judged, confirm_unjudged=unjudged
    )
    return TemplateResponse(request, "annotator/label_query.html", context)
