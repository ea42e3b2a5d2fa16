"""Project pages: list, overview, members, documents, queries, chunkings.

Every view goes through ``get_project_for_user``: outsiders get 404 on every page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from web.htmx import for_htmx

from .access import can_label, get_project_for_user, sees_all_labels
from .assignments import next_open
from .forms import ListFilterForm, MemberAddForm, MemberRoleForm, ProjectSettingsForm
from .models import Chunking, Document, Judgment, Membership, Project, Query, Role
from .originals import is_pdf, original_path

PAGE_SIZE = 50


def _list_filters(request: HttpRequest) -> dict | None:
    form = ListFilterForm(request.GET)
    if not form.is_valid():
        return None
    return form.cleaned_data


@login_required
@require_GET
def project_list(request: HttpRequest) -> HttpResponse:
    projects = Project.objects.for_user(request.user).annotate(
        n_documents=Count("documents", distinct=True),
        n_queries=Count("queries", distinct=True),
    )
    roles = dict(Membership.objects.filter(user=request.user).values_list("project_id", "role"))
    role_names = dict(Role.choices)  # shown in the user's language
    rows = [(p, role_names.get(roles.get(p.pk), roles.get(p.pk) or "")) for p in projects]
    return TemplateResponse(request, "annotator/project_list.html", {"rows": rows})


@login_required
@require_GET
def project_detail(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    chunkings = project.chunkings.annotate(n_chunks=Count("chunks"))
    judgments = Judgment.objects.visible_to(membership)
    context = {
        "project": project,
        "membership": membership,
        "n_documents": project.documents.count(),
        "n_queries": project.queries.count(),
        "chunkings": chunkings,
        "n_judgments": judgments.count(),
        "n_members": project.memberships.filter(is_pseudo=False).count(),
        "sees_all": sees_all_labels(membership),
        "can_label": can_label(membership),
        "next_assignment": next_open(project, request.user) if can_label(membership) else None,
    }
    return TemplateResponse(request, "annotator/project_detail.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def members(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug, Role.OWNER)
    form = MemberAddForm()
    if request.method == "POST":
        action = request.POST.get("action", "add")
        if action == "add":
            form = MemberAddForm(request.POST)
            if form.is_valid():
                user = form.cleaned_data["username"]
                Membership.objects.update_or_create(
                    project=project, user=user, defaults={"role": form.cleaned_data["role"]}
                )
                messages.success(request, _("%(user)s is now a member.") % {"user": user})
                return redirect("annotator:members", slug=slug)
        elif action in ("role", "remove"):
            target = get_object_or_404(
                Membership, project=project, pk=request.POST.get("membership"), is_pseudo=False
            )
            owners = project.memberships.filter(role=Role.OWNER)
            last_owner = target.role == Role.OWNER and owners.count() == 1
            if action == "remove":
                if last_owner:
                    return HttpResponseBadRequest(_("A project keeps at least one owner."))
                target.delete()
            else:
                role_form = MemberRoleForm(request.POST)
                if not role_form.is_valid():
                    return HttpResponseBadRequest(_("Unknown role."))
                if last_owner and role_form.cleaned_data["role"] != Role.OWNER:
                    return HttpResponseBadRequest(_("A project keeps at least one owner."))
                target.role = role_form.cleaned_data["role"]
                target.save(update_fields=["role"])
            return redirect("annotator:members", slug=slug)
        else:
            return HttpResponseBadRequest(_("Unknown action."))
    rows = project.memberships.select_related("user").order_by("is_pseudo", "user__username")
    context = {
        "project": project,
        "membership": membership,
        "rows": rows,
        "form": form,
        "roles": Role.choices,
    }
    return TemplateResponse(request, "annotator/members.html", context)


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
def document_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's documents, filtered as you type; htmx requests get the table alone."""
    project, membership = get_project_for_user(request, slug)
    filters = _list_filters(request)
    if filters is None:
        return HttpResponseBadRequest(_("Bad search or page parameter."))
    documents = project.documents.only("id", "doc_id", "title", "page_starts").order_by("id")
    if filters["q"]:
        documents = documents.filter(
            Q(doc_id__icontains=filters["q"]) | Q(title__icontains=filters["q"])
        )
    page = Paginator(documents, PAGE_SIZE).get_page(filters["page"] or 1)
    context = {"project": project, "membership": membership, "page": page, "q": filters["q"]}
    return TemplateResponse(request, "annotator/document_list.html", context)


@login_required
@require_GET
def document_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    document = get_object_or_404(Document, project=project, pk=pk)
    pictures = is_pdf(document) and original_path(document) is not None
    pages = [
        {
            "number": i + 1,
            "text": document.text[start:end],
            "image": reverse("annotator:document_page_image", args=[slug, document.pk, i + 1])
            + "?width=600"
            if pictures
            else "",
        }
        for i, (start, end) in enumerate(document.page_spans())
    ]
    context = {
        "has_original": original_path(document) is not None,
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
def query_list(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's queries, filtered as you type; htmx requests get the table alone."""
    project, membership = get_project_for_user(request, slug)
    filters = _list_filters(request)
    if filters is None:
        return HttpResponseBadRequest(_("Bad search or page parameter."))
    queries = project.queries.order_by("id")
    if filters["q"]:
        queries = queries.filter(Q(qid__icontains=filters["q"]) | Q(text__icontains=filters["q"]))
    page = Paginator(queries, PAGE_SIZE).get_page(filters["page"] or 1)
    context = {"project": project, "membership": membership, "page": page, "q": filters["q"]}
    return TemplateResponse(request, "annotator/query_list.html", context)


@login_required
@require_GET
def query_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    query = get_object_or_404(Query, project=project, pk=pk)
    judgments = (
        Judgment.objects.visible_to(membership)
        .filter(query=query)
        .select_related("document", "annotator", "chunk")
        .order_by("annotator__username", "-grade", "document__doc_id", "start")
    )
    context = {
        "project": project,
        "membership": membership,
        "query": query,
        "judgments": judgments,
        "grade_labels": dict(project.shown_grade_labels),
        "sees_all": sees_all_labels(membership),
        "can_label": can_label(membership),
    }
    return TemplateResponse(request, "annotator/query_detail.html", context)


@login_required
@require_GET
def chunking_list(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = get_project_for_user(request, slug)
    chunkings = Chunking.objects.filter(project=project).annotate(
        n_chunks=Count("chunks"), n_documents=Count("chunks__document", distinct=True)
    )
    context = {"project": project, "membership": membership, "chunkings": chunkings}
    return TemplateResponse(request, "annotator/chunking_list.html", context)
