"""Project pages: list, new project, overview, members, documents, queries, chunkings.

Every view goes through ``get_project_for_user``: outsiders get 404 on every page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from web.errors import answers_bad_parameters
from web.fields import whole
from web.htmx import for_htmx
from web.pages import page_of
from web.sections import sections

from .access import can_create_projects, can_label, get_project_for_user, sees_all_labels
from .assignments import next_open
from .forms import (
    ListFilterForm,
    MemberAddForm,
    MemberRoleForm,
    ProjectNewForm,
    ProjectSettingsForm,
)
from .label_counts import visible_label_count
from .labelling.cards import kept_note_rows
from .models import Chunking, Document, Judgment, Membership, Project, Query, Role
from .originals import is_pdf, original_name
from .projects import ProjectRejected, add_member, change_role, create_project, remove_member


def _list_filters(request: HttpRequest) -> dict | None:
    form = ListFilterForm(request.GET)
    if not form.is_valid():
        return None
    return form.cleaned_data


@login_required
@require_GET
@answers_bad_parameters
def project_list(request: HttpRequest) -> HttpResponse:
    # The figures are kept by the database (annotator/models/figures.py): one row per
    # project joined one to one, never a count over documents or queries.
    projects = Project.objects.for_user(request.user).select_related("figures")
    page = page_of(request, projects)
    roles = dict(
        Membership.objects.filter(
            user=request.user, project__in=[p.pk for p in page.object_list]
        ).values_list("project_id", "role")
    )
    rows = [(p, Role(roles[p.pk]).label if p.pk in roles else "") for p in page.object_list]
    context = {"rows": rows, "page": page, "can_create": can_create_projects(request.user)}
    return TemplateResponse(request, "annotator/project_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    """Staff and project owners start a project and become its first owner."""
    if not can_create_projects(request.user):
        raise PermissionDenied(_("Only staff and project owners create projects."))
    form = ProjectNewForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = create_project(owner=request.user, **form.cleaned_data)
        except ProjectRejected as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, _("Project %(name)s created.") % {"name": project.name})
            return redirect("annotator:members", slug=project.slug)
    status = 400 if form.errors else 200
    return TemplateResponse(request, "annotator/project_new.html", {"form": form}, status=status)


@login_required
@require_GET
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    chunkings = project.chunkings.select_related("figures")
    context = {
        "project": project,
        "membership": membership,
        "figures": project.figures,
        "chunkings": chunkings,
        "n_judgments": visible_label_count(membership),
        "n_members": project.memberships.filter(is_pseudo=False).count(),
        "sees_all": sees_all_labels(membership),
        "can_label": can_label(membership),
        "next_assignment": next_open(project, request.user) if can_label(membership) else None,
    }
    return TemplateResponse(request, "annotator/project_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
@answers_bad_parameters
def members(request: HttpRequest, slug: str) -> HttpResponse:
    """Owners add people by username or email, change their role, remove them."""
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    form, error, status = MemberAddForm(), "", 200
    if request.method == "POST":
        action = request.POST.get("action", "add")
        if action not in ("add", "role", "remove"):
            return HttpResponseBadRequest(_("Unknown action."))
        try:
            if action == "add":
                form = MemberAddForm(request.POST)
                if form.is_valid():
                    data = form.cleaned_data
                    added = add_member(project, data["username"], data["role"])
                    message = _("%(user)s is now a member (%(role)s).") % {
                        "user": added.user.get_username(),
                        "role": added.get_role_display(),
                    }
                    messages.success(request, message)
                    return redirect("annotator:members", slug=slug)
            else:
                chosen = whole(request.POST.get("membership"))
                if chosen is None:
                    return HttpResponseBadRequest(_("Which member?"))
                target = get_object_or_404(Membership, project=project, pk=chosen, is_pseudo=False)
                if action == "remove":
                    remove_member(target)
                else:
                    role_form = MemberRoleForm(request.POST)
                    if not role_form.is_valid():
                        raise ProjectRejected(_("Unknown role."), "role")
                    change_role(target, role_form.cleaned_data["role"])
                return redirect("annotator:members", slug=slug)
        except ProjectRejected as rejected:
            if action == "add" and rejected.field in form.fields:
                form.add_error(rejected.field, rejected.message)
            else:
                error = rejected.message
        status = 400
    members = project.memberships.select_related("user").order_by("is_pseudo", "user__username")
    page = page_of(request, members)
    context = {
        "project": project,
        "membership": membership,
        "rows": page.object_list,
        "page": page,
        "form": form,
        "roles": Role.choices,
        "error": error,
    }
    return TemplateResponse(request, "annotator/members.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Settings saved."))
        return redirect("annotator:project_settings", slug=slug)
    context = {"project": project, "membership": membership, "form": form}
    return TemplateResponse(request, "annotator/project_settings.html", context)


@for_htmx("annotator/partials/document_table.html")
@login_required
@require_GET
@answers_bad_parameters
def document_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's documents, filtered as you type; htmx requests get the table alone."""
    project, membership = get_project_for_user(request, slug)
    filters = _list_filters(request)
    if filters is None:
        return HttpResponseBadRequest(_("Bad search or page parameter."))
    documents = project.documents.only("id", "doc_id", "title", "page_starts").order_by("id")
    count = project.figures.documents
    if filters["q"]:
        documents = documents.filter(
            Q(doc_id__icontains=filters["q"]) | Q(title__icontains=filters["q"])
        )
        count = None
    page = page_of(request, documents, count=count)
    context = {"project": project, "membership": membership, "page": page, "q": filters["q"]}
    return TemplateResponse(request, "annotator/document_list.html", context)


@login_required
@require_GET
def document_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    document = get_object_or_404(Document, project=project, pk=pk)
    has_original = original_name(document) is not None
    pictures = is_pdf(document) and has_original
    not_drawn = set(document.metadata.get("pages_not_drawn") or []) if pictures else set()
    pages = [
        {
            "number": i + 1,
            "text": document.text[start:end],
            "image": reverse("annotator:document_page_image", args=[slug, document.pk, i + 1])
            + "?width=600"
            if pictures and i + 1 not in not_drawn
            else "",
        }
        for i, (start, end) in enumerate(document.page_spans())
    ]
    context = {
        "has_original": has_original,
        "pictures": pictures,
        "project": project,
        "membership": membership,
        "document": document,
        "pages": pages,
        "has_pages": bool(document.page_starts),
        "metadata": sorted(document.metadata.items()),
    }
    return TemplateResponse(request, "annotator/document_detail.html", context)


@for_htmx("annotator/partials/query_table.html")
@login_required
@require_GET
@answers_bad_parameters
def query_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's queries, filtered as you type; htmx requests get the table alone."""
    project, membership = get_project_for_user(request, slug)
    filters = _list_filters(request)
    if filters is None:
        return HttpResponseBadRequest(_("Bad search or page parameter."))
    queries = project.queries.order_by("id")
    count = project.figures.queries
    if filters["q"]:
        queries = queries.filter(Q(qid__icontains=filters["q"]) | Q(text__icontains=filters["q"]))
        count = None
    page = page_of(request, queries, count=count)
    context = {"project": project, "membership": membership, "page": page, "q": filters["q"]}
    return TemplateResponse(request, "annotator/query_list.html", context)


@login_required
@require_GET
@answers_bad_parameters
def query_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    query = get_object_or_404(Query, project=project, pk=pk)
    judgments = (
        Judgment.objects.visible_to(membership)
        .filter(query=query)
        .select_related("document", "annotator", "chunk")
        .order_by("annotator__username", "-grade", "document__doc_id", "start", "pk")
    )
    page = page_of(request, judgments)
    context = {
        "project": project,
        "membership": membership,
        "query": query,
        "judgments": page.object_list,
        "page": page,
        "grade_labels": dict(project.shown_grade_labels),
        "sees_all": sees_all_labels(membership),
        "can_label": can_label(membership),
        # What other apps add to the query's page (its nuggets …).
        "sections": sections("query_page", membership=membership, query=query),
        "kept_notes": kept_note_rows(query, membership),
    }
    return TemplateResponse(request, "annotator/query_detail.html", context)


@login_required
@require_GET
def chunking_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    chunkings = Chunking.objects.filter(project=project).select_related("figures")
    context = {"project": project, "membership": membership, "chunkings": chunkings}
    return TemplateResponse(request, "annotator/chunking_list.html", context)
