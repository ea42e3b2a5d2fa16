"""The labelling screens: queue, assignments, chunk judging, document evidence, search.

Every view checks project membership before anything else (outsiders get 404 whatever
the method), then the method (405), then the role for writes (403). Labels are written
only through ``annotator.labels``; a save is committed before the response says so.
Full pages for normal requests, partials from ``templates/annotator/partials/`` for htmx.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Substr
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import escape
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event

from . import assignments as work
from .access import can_label, get_project_for_user, sees_all_labels
from .labelling_forms import (
    AssignForm,
    DocumentViewForm,
    JudgeForm,
    QueueFilterForm,
    SearchForm,
    StatusForm,
)
from .labels import Evidence, change_label, undo_change
from .models import (
    DEFAULT_GRADE_LABELS,
    Assignment,
    AssignmentStatus,
    Chunk,
    Chunking,
    Document,
    Granularity,
    Judgment,
    Membership,
    Project,
    Query,
    Role,
)
from .pool import candidate_chunk_ids, stable_shuffle
from .search import default_chunking, highlight, search, split_terms

QUEUE_PAGE_SIZE = 50
SEARCH_LIMIT = 30
WINDOW_CHARS = 5000  # documents without pages are shown in parts of about this size
EXCERPT_CHARS = 300


# ---------------------------------------------------------------------------- helpers


def member_view(*methods: str) -> Callable:
    """Login, then project membership (404), then the HTTP method (405)."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str, *args, **kwargs) -> HttpResponse:
            project, membership = get_project_for_user(request, slug)
            if request.method not in methods:
                return HttpResponseNotAllowed(methods)
            return view(request, project, membership, *args, **kwargs)

        return wrapper

    return decorator


def _require_labeller(membership: Membership) -> None:
    if not can_label(membership):
        raise PermissionDenied(_("Viewers cannot change labels."))


def _bad_request(form) -> HttpResponse:
    errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
    return HttpResponseBadRequest(errors, content_type="text/plain; charset=utf-8")


def _text_error(message: str, status: int = 400) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def _safe_next(request: HttpRequest, fallback: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def duration(seconds: float) -> str:
    seconds = round(seconds or 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _page_of(page_starts: list[int], offset: int) -> int | None:
    return bisect.bisect_right(page_starts, offset) if page_starts else None


def _excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _chunking_from(request: HttpRequest, project: Project) -> Chunking | None:
    """The chunking the annotator picked (``?chunking=``), or None."""
    raw = request.GET.get("chunking") or request.POST.get("chunking")
    if not raw:
        return None
    try:
        return project.chunkings.get(pk=int(raw))
    except (ValueError, Chunking.DoesNotExist):
        raise Http404("No such chunking") from None


# The default grade labels, translated when a project keeps them unchanged.
DEFAULT_LABELS_TRANSLATED = {
    DEFAULT_GRADE_LABELS[0]: gettext_lazy("Not relevant"),
    DEFAULT_GRADE_LABELS[1]: gettext_lazy("Related, does not answer"),
    DEFAULT_GRADE_LABELS[2]: gettext_lazy("Partially answers"),
    DEFAULT_GRADE_LABELS[3]: gettext_lazy("Fully answers"),
}


def _grades(project: Project) -> list[tuple[int, str]]:
    return [
        (grade, str(DEFAULT_LABELS_TRANSLATED.get(label, label)))
        for grade, label in project.grade_labels
    ]


def _grade_label(project: Project, grade: int | None) -> str:
    return dict(_grades(project)).get(grade, "") if grade is not None else ""


# ------------------------------------------------------------------------ candidate cards


@dataclass
class Card:
    chunk_pk: int
    chunk_id: str
    document_pk: int
    doc_id: str
    title: str
    start: int
    end: int
    page: int | None
    text: str
    position: int = 0
    judgment_pk: int | None = None
    grade: int | None = None
    note: str = ""
    others: list[tuple[str, int]] = field(default_factory=list)
    pieces: list[tuple[str, bool]] | None = None  # search-hit highlighting


def _cards(
    project: Project, query: Query, user, chunk_pks: list[int], *, sees_all: bool
) -> list[Card]:
    """Cards for these chunks, in this order; chunks outside the project are dropped."""
    if not chunk_pks:
        return []
    # Filter by primary key only and check the project in Python: with a project filter
    # SQLite starts from the project's documents, which is slow for a large project.
    rows = (
        Chunk.objects.filter(pk__in=chunk_pks)
        .annotate(body=Substr("document__text", F("start") + 1, F("end") - F("start")))
        .values(
            "pk",
            "document__project_id",
            "chunk_id",
            "start",
            "end",
            "document_id",
            "document__doc_id",
            "document__title",
            "document__page_starts",
            "body",
        )
    )
    by_pk = {
        r["pk"]: Card(
            chunk_pk=r["pk"],
            chunk_id=r["chunk_id"],
            document_pk=r["document_id"],
            doc_id=r["document__doc_id"],
            title=r["document__title"],
            start=r["start"],
            end=r["end"],
            page=_page_of(r["document__page_starts"] or [], r["start"]),
            text=r["body"] or "",
        )
        for r in rows
        if r["document__project_id"] == project.pk
    }
    mine = Judgment.objects.filter(
        query=query, annotator=user, granularity=Granularity.CHUNK, chunk_id__in=list(by_pk)
    ).values_list("chunk_id", "pk", "grade", "note")
    for chunk_pk, judgment_pk, grade, note in mine:
        card = by_pk[chunk_pk]
        card.judgment_pk, card.grade, card.note = judgment_pk, grade, note
    if sees_all:
        others = (
            Judgment.objects.filter(
                query=query, granularity=Granularity.CHUNK, chunk_id__in=list(by_pk)
            )
            .exclude(annotator=user)
            .order_by("annotator__username")
            .values_list("chunk_id", "annotator__username", "grade")
        )
        for chunk_pk, username, grade in others:
            by_pk[chunk_pk].others.append((username, grade))
    cards = [by_pk[pk] for pk in chunk_pks if pk in by_pk]
    for i, card in enumerate(cards, 1):
        card.position = i
    return cards


# ---------------------------------------------------------------------- evidence rows


@dataclass
class EvidenceRow:
    judgment_pk: int
    granularity: str
    granularity_label: str
    document_pk: int
    doc_id: str
    title: str
    start: int
    end: int
    page: int | None
    excerpt: str
    grade: int
    note: str
    chunk_pk: int | None
    chunk_id: str
    annotator: str
    own: bool


def _evidence_rows(judgments) -> list[EvidenceRow]:
    labels = dict(Granularity.choices)
    rows = judgments.annotate(
        body=Substr("document__text", F("start") + 1, min(EXCERPT_CHARS, 2000))
    ).values(
        "pk",
        "granularity",
        "document_id",
        "document__doc_id",
        "document__title",
        "document__page_starts",
        "start",
        "end",
        "grade",
        "note",
        "chunk_id",
        "chunk__chunk_id",
        "annotator__username",
        "body",
    )
    result = []
    for r in rows:
        excerpt_len = r["end"] - r["start"]
        body = r["body"] or ""
        result.append(
            EvidenceRow(
                judgment_pk=r["pk"],
                granularity=r["granularity"],
                granularity_label=str(labels.get(r["granularity"], r["granularity"])),
                document_pk=r["document_id"],
                doc_id=r["document__doc_id"],
                title=r["document__title"],
                start=r["start"],
                end=r["end"],
                page=_page_of(r["document__page_starts"] or [], r["start"]),
                excerpt=_excerpt(body[:excerpt_len] + ("…" if excerpt_len > len(body) else "")),
                grade=r["grade"],
                note=r["note"],
                chunk_pk=r["chunk_id"],
                chunk_id=r["chunk__chunk_id"] or "",
                annotator=r["annotator__username"],
                own=False,
            )
        )
    return result


def _my_evidence(query: Query, user, *, exclude_chunks: set[int]) -> list[EvidenceRow]:
    """The user's labels on this query that are not candidate cards on the screen."""
    judgments = (
        Judgment.objects.filter(query=query, annotator=user)
        .exclude(chunk_id__in=exclude_chunks)
        .order_by("document_id", "start", "granularity")
    )
    rows = _evidence_rows(judgments)
    for row in rows:
        row.own = True
    return rows


# ------------------------------------------------------------------------ queue


@member_view("GET")
def queue(request: HttpRequest, project: Project, membership: Membership) -> HttpResponse:
    form = QueueFilterForm(request.GET)
    if not form.is_valid():
        return _bad_request(form)
    status = form.cleaned_data["status"]
    items = Assignment.objects.filter(project=project, annotator=request.user).select_related(
        "query"
    )
    if status:
        items = items.filter(status=status)
    page = Paginator(items.order_by("query_id"), QUEUE_PAGE_SIZE).get_page(
        form.cleaned_data["page"] or 1
    )
    for item in page.object_list:
        item.time_display = duration(item.time_spent_seconds)
    nxt = work.next_open(project, request.user)
    context = {
        "project": project,
        "membership": membership,
        "page": page,
        "status": status,
        "statuses": AssignmentStatus.choices,
        "progress": work.progress(project, request.user),
        "next_assignment": nxt,
        "can_label": can_label(membership),
    }
    context["progress_time"] = duration(context["progress"].seconds)
    template = (
        "annotator/partials/label_queue_table.html" if request.htmx else "annotator/queue.html"
    )
    return render(request, template, context)


# ------------------------------------------------------------------------ assignments


def _assign_context(project: Project, membership: Membership, form=None) -> dict:
    people = list(work.labellers(project))
    tags = work.project_tags(project)
    if form is None:
        initial_people = [
            u.pk
            for u in people
            if Membership.objects.filter(project=project, user=u, role=Role.ANNOTATOR).exists()
        ]
        form = AssignForm(annotators=people, tags=tags, initial={"annotators": initial_people})
    team = work.team_progress(project)
    for row in team:
        row["time_display"] = duration(row["seconds"] or 0)
    return {
        "project": project,
        "membership": membership,
        "form": form,
        "team": team,
        "n_queries": project.queries.count(),
        "n_unassigned": project.queries.filter(assignments__isnull=True).count(),
        "can_assign": membership.role == Role.OWNER,
    }


@member_view("GET", "POST")
def assign(request: HttpRequest, project: Project, membership: Membership) -> HttpResponse:
    """Owners give queries to annotators; every member sees the team's progress."""
    if request.method == "GET":
        context = _assign_context(project, membership)
        template = (
            "annotator/partials/label_assign_team.html" if request.htmx else "annotator/assign.html"
        )
        return render(request, template, context)
    if membership.role != Role.OWNER:
        raise PermissionDenied(_("Only the project's owners assign work."))
    people = list(work.labellers(project))
    form = AssignForm(request.POST, annotators=people, tags=work.project_tags(project))
    if not form.is_valid():
        if request.htmx:
            return _bad_request(form)
        return render(
            request, "annotator/assign.html", _assign_context(project, membership, form), status=400
        )
    data = form.cleaned_data
    query_ids = work.select_queries(
        project,
        tag=data["tag"] if data["scope"] == "tag" else "",
        qids=data.get("qid_list", []) if data["scope"] == "qids" else (),
    )
    if data["scope"] == "qids":
        known = set(project.queries.filter(qid__in=data["qid_list"]).values_list("qid", flat=True))
        unknown = [q for q in data["qid_list"] if q not in known]
        if unknown:
            message = _("Unknown query ids: %(ids)s") % {"ids": ", ".join(unknown[:20])}
            form.add_error("qids", message)
            if request.htmx:
                return _bad_request(form)
            return render(
                request,
                "annotator/assign.html",
                _assign_context(project, membership, form),
                status=400,
            )
    annotators = data["annotators"]
    if data["mode"] == "even":
        n = work.assign_evenly(project, query_ids, annotators, data["per_query"], request.user)
        message = _("%(n)d assignments added.") % {"n": n}
    elif data["mode"] == "each":
        n = work.assign_each(project, query_ids, annotators, request.user)
        message = _("%(n)d assignments added.") % {"n": n}
    else:
        n = work.unassign(project, query_ids, annotators)
        message = _("%(n)d unfinished assignments taken back.") % {"n": n}
    if request.htmx:
        context = _assign_context(project, membership)
        context["message"] = message
        return render(request, "annotator/partials/label_assign_team.html", context)
    messages.success(request, message)
    return redirect("annotator:assign", slug=project.slug)


# ------------------------------------------------------------------------ judging screen


def _screen_context(
    request: HttpRequest, project: Project, membership: Membership, query: Query
) -> dict:
    user = request.user
    chosen = _chunking_from(request, project)
    pool = candidate_chunk_ids(query, project.pool_depth, chunking=chosen)
    ordered = stable_shuffle(pool, annotator_id=user.pk, query_id=query.pk)
    sees_all = sees_all_labels(membership)
    cards = _cards(project, query, user, ordered, sees_all=sees_all)
    labeller = can_label(membership)
    assignment = work.assignment_for(query, user) if labeller else None
    return {
        "project": project,
        "membership": membership,
        "query": query,
        "cards": cards,
        "n_judged": sum(card.grade is not None for card in cards),
        "my_evidence": _my_evidence(query, user, exclude_chunks={c.chunk_pk for c in cards}),
        "grades": _grades(project),
        "can_label": labeller,
        "sees_all": sees_all,
        "assignment": assignment,
        "chunkings": list(project.chunkings.order_by("pk").values_list("pk", "name")),
        "chunking": chosen,
        "default_chunking": default_chunking(project) if chosen is None else chosen,
        "slot": "cand",
        "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
    }


def _status_context(project: Project, membership: Membership, query: Query, user) -> dict:
    labeller = can_label(membership)
    assignment = work.assignment_for(query, user) if labeller else None
    progress = work.progress(project, user) if labeller else None
    return {
        "project": project,
        "query": query,
        "assignment": assignment,
        "time_display": duration(assignment.time_spent_seconds) if assignment else "",
        "progress": progress,
        "next_assignment": work.next_open(project, user, after=query) if labeller else None,
        "can_label": labeller,
    }


@member_view("GET")
def label_query(
    request: HttpRequest, project: Project, membership: Membership, pk: int
) -> HttpResponse:
    """The judging screen of one query: its candidate pool, graded with the keyboard."""
    query = get_object_or_404(Query, project=project, pk=pk)
    context = _screen_context(request, project, membership, query)
    if request.htmx:
        return render(request, "annotator/partials/label_candidates.html", context)
    work.mark_opened(context["assignment"])
    context.update(_status_context(project, membership, query, request.user))
    return render(request, "annotator/label_query.html", context)


# ------------------------------------------------------------------------ writing labels


def _own_judgment(query: Query, user, pk: int | None) -> Judgment:
    """One of the user's own labels on this query; anybody else's is a 404."""
    judgment = (
        Judgment.objects.select_related("document", "chunk")
        .defer("document__text", "document__metadata")
        .filter(pk=pk, query=query, annotator=user)
        .first()
    )
    if judgment is None:
        raise Http404("No such label")
    return judgment


class EvidenceError(ValueError):
    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def _evidence(project: Project, query: Query, user, data: dict) -> Evidence:
    if data.get("judgment"):
        j = _own_judgment(query, user, data["judgment"])
        return Evidence(j.granularity, j.document, j.start, j.end, j.chunk)
    if data.get("chunk"):
        chunk = (
            Chunk.objects.select_related("document")
            .defer("document__text", "document__metadata")
            .filter(pk=data["chunk"])
            .first()
        )
        if chunk is None or chunk.document.project_id != project.pk:
            raise Http404("No such chunk")
        return Evidence.for_chunk(chunk)
    document = Document.objects.filter(pk=data.get("document"), project=project).first()
    if document is None:
        raise Http404("No such document")
    granularity = data["granularity"]
    try:
        if granularity == Granularity.DOCUMENT:
            return Evidence.for_document(document)
        if granularity == Granularity.PAGE:
            if not data.get("page"):
                raise EvidenceError(_("Which page?"))
            return Evidence.for_page(document, data["page"])
        start, end = data.get("start"), data.get("end")
        if start is None or end is None:
            raise EvidenceError(_("Select some text first."))
        evidence = Evidence.for_passage(document, start, end)
    except EvidenceError:
        raise
    except ValueError:
        raise EvidenceError(_("That part is not in the document.")) from None
    expected = data.get("text")
    if expected and expected != document.text[start:end].replace("\x00", "\ufffd"):
        raise EvidenceError(
            _("The selection does not match the document's text; reload the page."), 409
        )
    return evidence


def _status_html(request: HttpRequest, message: str, *, error: bool = False) -> str:
    return render_to_string(
        "annotator/partials/label_save_status.html",
        {"message": message, "error": error, "oob": True},
        request=request,
    )


def _card_html(request, project, query, membership, chunk_pk: int, slot: str, oob: bool) -> str:
    cards = _cards(project, query, request.user, [chunk_pk], sees_all=sees_all_labels(membership))
    if not cards:
        return ""
    return render_to_string(
        "annotator/partials/label_card.html",
        {
            "card": cards[0],
            "slot": slot,
            "oob": oob,
            "grades": _grades(project),
            "can_label": can_label(membership),
            "sees_all": sees_all_labels(membership),
            "project": project,
            "query": query,
            "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
        },
        request=request,
    )


def _evidence_list_html(request, project, query, membership, oob: bool) -> str:
    exclude = set(request.POST.getlist("on_screen", [])) if request.method == "POST" else set()
    exclude_pks = {int(x) for x in exclude if x.isdigit()}
    return render_to_string(
        "annotator/partials/label_evidence_list.html",
        {
            "my_evidence": _my_evidence(query, request.user, exclude_chunks=exclude_pks),
            "grades": _grades(project),
            "can_label": can_label(membership),
            "project": project,
            "query": query,
            "oob": oob,
            "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
        },
        request=request,
    )


@member_view("GET", "POST")
def label_query_judge(
    request: HttpRequest, project: Project, membership: Membership, pk: int
) -> HttpResponse:
    """GET: the user's labels on the query (or one of them). POST: grade, remove, undo."""
    query = get_object_or_404(Query, project=project, pk=pk)
    if request.method == "GET":
        return _judge_get(request, project, membership, query)
    _require_labeller(membership)
    form = JudgeForm(request.POST)
    if not form.is_valid():
        return _bad_request(form)
    data = form.cleaned_data
    user = request.user
    seconds = work.clamp_seconds(data.get("elapsed"))
    try:
        if data["action"] == "undo":
            change = undo_change(
                query=query, user=user, history_pk=data["history"], seconds=seconds
            )
            if change is None:
                raise Http404("No such change")
            history = change.history
            evidence = change.evidence if change.history is not None else None
            message = _("Undone.") if evidence is not None else _("Nothing to undo.")
        elif data["action"] == "delete":
            judgment = _own_judgment(query, user, data["judgment"])
            change = change_label(
                query=query,
                annotator=user,
                evidence=Evidence(
                    judgment.granularity,
                    judgment.document,
                    judgment.start,
                    judgment.end,
                    judgment.chunk,
                ),
                grade=None,
                seconds=seconds,
            )
            evidence, history = change.evidence, change.history
            message = _("Label removed.")
        else:
            evidence = _evidence(project, query, user, data)
            note = data["note"] if "note" in request.POST else None
            change = change_label(
                query=query,
                annotator=user,
                evidence=evidence,
                grade=data["grade"],
                note=note,
                seconds=seconds,
            )
            history = change.history
            message = _("Saved: %(grade)d · %(label)s") % {
                "grade": change.judgment.grade,
                "label": _grade_label(project, change.judgment.grade),
            }
    except EvidenceError as error:
        return _text_error(str(error), error.status)
    # Committed: from here on the screen may say "saved".
    if not request.htmx:
        return redirect(
            _safe_next(request, reverse("annotator:label_query", args=[project.slug, query.pk]))
        )
    response = HttpResponse(
        _judge_response_html(request, project, membership, query, data, evidence, message)
    )
    if data["action"] == "undo":
        trigger_client_event(response, "assay:undone", {"history": data["history"]})
    elif history is not None:
        trigger_client_event(response, "assay:saved", {"history": history.pk})
    return response


def _judge_response_html(request, project, membership, query, data, evidence, message) -> str:
    slot = data["slot"]
    parts: list[str] = []
    chunk_pk = evidence.chunk.pk if evidence is not None and evidence.chunk is not None else None
    if data["action"] == "undo":
        # Nothing is targeted: refresh whatever shows this evidence, out of band.
        if chunk_pk is not None:
            parts.append(_card_html(request, project, query, membership, chunk_pk, "cand", True))
            parts.append(_card_html(request, project, query, membership, chunk_pk, "found", True))
        parts.append(_evidence_list_html(request, project, query, membership, True))
    elif slot in ("cand", "found") and chunk_pk is not None:
        parts.append(_card_html(request, project, query, membership, chunk_pk, slot, False))
        other = "found" if slot == "cand" else "cand"
        parts.append(_card_html(request, project, query, membership, chunk_pk, other, True))
    elif slot == "row":
        if data["action"] != "delete":
            row = _evidence_rows(
                Judgment.objects.filter(query=query, annotator=request.user, **evidence.lookup())
            )
            for r in row:
                r.own = True
            parts.append(
                render_to_string(
                    "annotator/partials/label_evidence_row.html",
                    {
                        "row": row[0] if row else None,
                        "grades": _grades(project),
                        "can_label": True,
                        "project": project,
                        "query": query,
                        "judge_url": reverse(
                            "annotator:label_query_judge", args=[project.slug, query.pk]
                        ),
                    },
                    request=request,
                )
            )
        if chunk_pk is not None:
            parts.append(_card_html(request, project, query, membership, chunk_pk, "cand", True))
    elif slot == "doc" and evidence is not None:
        context = _document_context(
            request,
            project,
            membership,
            query,
            evidence.document.pk,
            page=data.get("view_page"),
            at=None,
            focus_end=None,
        )
        parts.append(
            render_to_string(
                "annotator/partials/label_document_view.html", context, request=request
            )
        )
    elif slot == "docres" and evidence is not None:
        parts.append(
            _document_result_html(request, project, membership, query, evidence.document.pk)
        )
    parts.append(_status_html(request, message))
    return "".join(parts)


def _judge_get(request, project, membership, query) -> HttpResponse:
    if request.GET.get("judgment"):
        try:
            pk = int(request.GET["judgment"])
        except ValueError:
            return _text_error(_("Bad label id."))
        judgment = _own_judgment(query, request.user, pk)
        rows = _evidence_rows(Judgment.objects.filter(pk=judgment.pk))
        rows[0].own = True
        return render(
            request,
            "annotator/partials/label_evidence_row.html",
            {
                "row": rows[0],
                "grades": _grades(project),
                "can_label": can_label(membership),
                "project": project,
                "query": query,
                "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
            },
        )
    if request.GET.get("chunk"):
        try:
            chunk_pk = int(request.GET["chunk"])
        except ValueError:
            return _text_error(_("Bad chunk id."))
        html = _card_html(request, project, query, membership, chunk_pk, "cand", False)
        if not html:
            raise Http404("No such chunk")
        return HttpResponse(html)
    return HttpResponse(_evidence_list_html(request, project, query, membership, False))


# ------------------------------------------------------------------------ queue status


@member_view("GET", "POST")
def label_query_status(
    request: HttpRequest, project: Project, membership: Membership, pk: int
) -> HttpResponse:
    """The query's place in the user's queue: skip with a reason, done, reopen, time."""
    query = get_object_or_404(Query, project=project, pk=pk)
    if request.method == "GET":
        context = _status_context(project, membership, query, request.user)
        return render(request, "annotator/partials/label_status.html", context)
    _require_labeller(membership)
    form = StatusForm(request.POST)
    if not form.is_valid():
        return _bad_request(form)
    data = form.cleaned_data
    assignment = work.assignment_for(query, request.user)
    seconds = work.clamp_seconds(data.get("elapsed"))
    if data["action"] == "time":
        work.add_time(assignment, seconds)
        return HttpResponse(status=204)
    if assignment is None:
        return _text_error(_("This query is not in your queue."))
    with transaction.atomic():
        work.add_time(assignment, seconds)
        if data["action"] == "skip":
            work.set_status(assignment, AssignmentStatus.SKIPPED, reason=data["reason"])
        elif data["action"] == "done":
            work.set_status(assignment, AssignmentStatus.DONE)
        else:
            work.set_status(assignment, AssignmentStatus.OPEN)
    if data["action"] == "reopen":
        if request.htmx:
            context = _status_context(project, membership, query, request.user)
            return render(request, "annotator/partials/label_status.html", context)
        return redirect("annotator:label_query", slug=project.slug, pk=query.pk)
    nxt = work.next_open(project, request.user, after=query)
    target = (
        reverse("annotator:label_query", args=[project.slug, nxt.query_id])
        if nxt is not None
        else reverse("annotator:queue", args=[project.slug])
    )
    if request.htmx:
        return HttpResponseClientRedirect(target)
    return redirect(target)


# ------------------------------------------------------------------------ document view


@dataclass
class Mark:
    start: int
    end: int
    grade: int
    judgment_pk: int | None = None


def view_spans(document_text: str, page_starts: list[int]) -> list[tuple[int, int]]:
    """The parts a document is shown in: its pages, or windows of about WINDOW_CHARS."""
    n = len(document_text)
    if page_starts:
        ends = [*page_starts[1:], n]
        return list(zip(page_starts, ends, strict=True))
    spans: list[tuple[int, int]] = []
    start = 0
    while start < n or not spans:
        end = min(start + WINDOW_CHARS, n)
        if end < n:
            cut = document_text.rfind("\n", start + WINDOW_CHARS // 2, end)
            if cut != -1:
                end = cut + 1
        spans.append((start, end))
        if end >= n:
            break
        start = end
    return spans


def render_segments(
    text: str, start: int, end: int, marks: list[Mark], focus: tuple[int, int] | None = None
) -> SafeString:
    """Page text as spans, each carrying its exact character offset in ``data-start``.

    Spans are cut wherever evidence (or the focused chunk) begins or ends, so the browser
    can turn a selection back into offsets by counting code points from a span's start.
    No whitespace is added between spans: the page's text nodes are exactly the text.
    """
    bounds = {start, end}
    inside = []
    for mark in marks:
        a, b = max(mark.start, start), min(mark.end, end)
        if a < b:
            inside.append((a, b, mark))
            bounds.update((a, b))
    if focus is not None:
        fa, fb = max(focus[0], start), min(focus[1], end)
        if fa < fb:
            bounds.update((fa, fb))
        focus = (fa, fb)
    points = sorted(bounds)
    html: list[str] = []
    for a, b in itertools.pairwise(points):
        covering = [m for (ma, mb, m) in inside if ma <= a and mb >= b]
        classes = ["seg"]
        attrs = f' data-start="{a}"'
        if covering:
            best = max(m.grade for m in covering)
            classes += ["hl", f"g{best}"]
            ids = " ".join(str(m.judgment_pk) for m in covering if m.judgment_pk)
            attrs += f' data-judgments="{ids}"'
        if focus is not None and focus[0] <= a and b <= focus[1]:
            classes.append("focus")
        body = escape(text[a:b]).replace("\r", "&#13;").replace("\x00", "\ufffd")
        html.append(f'<span class="{" ".join(classes)}"{attrs}>{body}</span>')
    return mark_safe("".join(html))  # noqa: S308 - every text piece is escaped above


def _document_context(
    request: HttpRequest,
    project: Project,
    membership: Membership,
    query: Query,
    document_pk: int,
    *,
    page: int | None,
    at: int | None,
    focus_end: int | None,
) -> dict:
    document = get_object_or_404(Document, project=project, pk=document_pk)
    spans = view_spans(document.text, list(document.page_starts))
    if page is None and at is not None:
        page = next((i + 1 for i, (a, b) in enumerate(spans) if a <= at < b), len(spans))
    page = min(max(page or 1, 1), len(spans))
    start, end = spans[page - 1]
    mine = list(
        Judgment.objects.filter(query=query, annotator=request.user, document=document)
        .select_related("chunk")
        .order_by("start", "end")
    )
    marks = [
        Mark(j.start, j.end, j.grade, j.pk)
        for j in mine
        if j.granularity in (Granularity.PASSAGE, Granularity.CHUNK)
    ]
    focus = (at, focus_end) if at is not None and focus_end is not None and focus_end > at else None
    evidence = _evidence_rows(
        Judgment.objects.filter(query=query, annotator=request.user, document=document).order_by(
            "start", "end", "granularity"
        )
    )
    for row in evidence:
        row.own = True
        row.page = next((i + 1 for i, (a, b) in enumerate(spans) if a <= row.start < b), 1)
    others: list[EvidenceRow] = []
    if sees_all_labels(membership):
        others = _evidence_rows(
            Judgment.objects.filter(query=query, document=document)
            .exclude(annotator=request.user)
            .order_by("annotator__username", "start")
        )
    page_grade = next(
        (
            j.grade
            for j in mine
            if j.granularity == Granularity.PAGE and (j.start, j.end) == (start, end)
        ),
        None,
    )
    document_grade = next((j.grade for j in mine if j.granularity == Granularity.DOCUMENT), None)
    base = reverse("annotator:label_query_document", args=[project.slug, query.pk])
    return {
        "project": project,
        "membership": membership,
        "query": query,
        "document": document,
        "has_pages": bool(document.page_starts),
        "page": page,
        "n_pages": len(spans),
        "page_start": start,
        "page_end": end,
        "segments": render_segments(document.text, start, end, marks, focus),
        "evidence": evidence,
        "others": others,
        "page_grade": page_grade,
        "document_grade": document_grade,
        "grades": _grades(project),
        "can_label": can_label(membership),
        "sees_all": sees_all_labels(membership),
        "doc_url": base,
        "prev_url": f"{base}?document={document.pk}&page={page - 1}" if page > 1 else "",
        "next_url": f"{base}?document={document.pk}&page={page + 1}" if page < len(spans) else "",
        "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
        "label_url": reverse("annotator:label_query", args=[project.slug, query.pk]),
    }


def _pool_documents(project: Project, query: Query, membership, user, chunking) -> list[dict]:
    pool = candidate_chunk_ids(query, project.pool_depth, chunking=chunking)
    doc_pks = list(
        Chunk.objects.filter(pk__in=pool).values_list("document_id", flat=True).distinct()
    )
    doc_pks += list(
        Judgment.objects.filter(query=query, annotator=user)
        .values_list("document_id", flat=True)
        .distinct()
    )
    rows = (
        Document.objects.filter(pk__in=set(doc_pks), project=project)
        .order_by("doc_id")
        .values("pk", "doc_id", "title")
    )
    return list(rows)


@member_view("GET")
def label_query_document(
    request: HttpRequest, project: Project, membership: Membership, pk: int
) -> HttpResponse:
    """A document read for one query: select a passage, grade a page or the whole document."""
    query = get_object_or_404(Query, project=project, pk=pk)
    form = DocumentViewForm(request.GET)
    if not form.is_valid():
        return _bad_request(form)
    data = form.cleaned_data
    if not data["document"]:
        context = {
            "project": project,
            "membership": membership,
            "query": query,
            "documents": _pool_documents(
                project, query, membership, request.user, _chunking_from(request, project)
            ),
            "doc_url": reverse("annotator:label_query_document", args=[project.slug, pk]),
            "label_url": reverse("annotator:label_query", args=[project.slug, pk]),
        }
        template = (
            "annotator/partials/label_document_list_items.html"
            if request.htmx
            else "annotator/label_document_list.html"
        )
        return render(request, template, context)
    context = _document_context(
        request,
        project,
        membership,
        query,
        data["document"],
        page=data["page"],
        at=data["at"],
        focus_end=data["end"],
    )
    if request.htmx:
        return render(request, "annotator/partials/label_document_view.html", context)
    return render(request, "annotator/label_document.html", context)


# ------------------------------------------------------------------------ search


def _document_results_context(request, project, membership, query, doc_pks, terms=()) -> dict:
    docs = {
        d["pk"]: d
        for d in Document.objects.filter(pk__in=doc_pks, project=project)
        .annotate(head=Substr("text", 1, 4000))
        .values("pk", "doc_id", "title", "head")
    }
    grades = dict(
        Judgment.objects.filter(
            query=query,
            annotator=request.user,
            granularity=Granularity.DOCUMENT,
            document_id__in=list(docs),
        ).values_list("document_id", "grade")
    )
    results = []
    for pk in doc_pks:
        if pk not in docs:
            continue
        d = docs[pk]
        snippet = _snippet(d["head"] or "", list(terms))
        results.append(
            {
                "pk": pk,
                "doc_id": d["doc_id"],
                "title": d["title"],
                "title_pieces": highlight(d["title"], list(terms)),
                "pieces": highlight(snippet, list(terms)),
                "grade": grades.get(pk),
            }
        )
    return {
        "results": results,
        "grades": _grades(project),
        "can_label": can_label(membership),
        "project": project,
        "query": query,
        "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
        "doc_url": reverse("annotator:label_query_document", args=[project.slug, query.pk]),
    }


def _document_result_html(request, project, membership, query, doc_pk: int) -> str:
    context = _document_results_context(request, project, membership, query, [doc_pk])
    if not context["results"]:
        return ""
    return render_to_string(
        "annotator/partials/label_document_result.html",
        context | {"result": context["results"][0]},
        request=request,
    )


def _snippet(text: str, terms: list[str], width: int = 240) -> str:
    """About ``width`` characters of ``text`` around the first search hit."""
    lower = text.lower()
    hits = [lower.find(t.lower()) for t in terms if t and lower.find(t.lower()) >= 0]
    centre = min(hits) if hits else 0
    start = max(0, centre - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


@member_view("GET")
def label_query_search(
    request: HttpRequest, project: Project, membership: Membership, pk: int
) -> HttpResponse:
    """Full-text search over the project's chunks or documents, gradeable in place."""
    query = get_object_or_404(Query, project=project, pk=pk)
    form = SearchForm(request.GET)
    if not form.is_valid():
        return _bad_request(form)
    data = form.cleaned_data
    scope = data["scope"] or "chunks"
    chunking = _chunking_from(request, project) or default_chunking(project)
    q = data["q"]
    terms = split_terms(q)
    context = {
        "project": project,
        "membership": membership,
        "query": query,
        "q": q,
        "scope": scope,
        "searched": bool(terms),
        "chunking": chunking,
        "chunkings": list(project.chunkings.order_by("pk").values_list("pk", "name")),
        "grades": _grades(project),
        "can_label": can_label(membership),
        "sees_all": sees_all_labels(membership),
        "slot": "found",
        "cards": [],
        "results": [],
        "judge_url": reverse("annotator:label_query_judge", args=[project.slug, query.pk]),
        "search_url": reverse("annotator:label_query_search", args=[project.slug, query.pk]),
        "label_url": reverse("annotator:label_query", args=[project.slug, query.pk]),
    }
    if terms and scope == "documents":
        doc_pks = search(project, q, documents=True, limit=SEARCH_LIMIT)
        context.update(
            _document_results_context(request, project, membership, query, doc_pks, terms)
        )
    elif terms:
        chunk_pks = search(project, q, chunking=chunking, limit=SEARCH_LIMIT)
        cards = _cards(
            project, query, request.user, chunk_pks, sees_all=sees_all_labels(membership)
        )
        for card in cards:
            card.pieces = highlight(card.text, terms)
        context["cards"] = cards
    template = (
        "annotator/partials/label_search_results.html"
        if request.htmx
        else "annotator/label_search.html"
    )
    return render(request, template, context)
