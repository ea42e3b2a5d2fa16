"""The labelling screen object: who looks at which query, and what every view derives from it.

``member_view`` checks login, then project membership (outsiders get 404 whatever the
method), then the HTTP method (405), then finds the query; the view receives a ``Screen``
holding the request, project, membership and query, with the values every labelling view
needs (grade labels, URLs, can-label, sees-all, chosen chunking, candidates) computed once
and only when a template asks for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBadRequest,
    HttpResponseNotAllowed,
)
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _

from .. import assignments as work
from ..access import can_label, get_project_for_user, sees_all_labels
from ..models import Assignment, Chunking, Membership, Project, Query
from ..pool import candidate_chunk_ids, stable_shuffle
from ..screen_parts import card_part_flags
from ..search import default_chunking
from .cards import Card, EvidenceRow, chunk_cards, own_evidence
from .pieces import chunk_spans, fold_pool, repeated_parts


def duration(seconds: float) -> str:
    """A time with its units: "29 s", "1 min 5 s", "2 h 3 min" (in the user's language)."""
    seconds = round(seconds or 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return _("%(h)d h %(m)d min") % {"h": hours, "m": minutes}
    if minutes and not secs:
        return _("%(m)d min") % {"m": minutes}
    if minutes:
        return _("%(m)d min %(s)d s") % {"m": minutes, "s": secs}
    return _("%(s)d s") % {"s": secs}


def bad_request(form) -> HttpResponse:
    """Every error of an invalid form, as plain text with status 400."""
    errors = "; ".join(str(e) for errs in form.errors.values() for e in errs)
    return HttpResponseBadRequest(errors, content_type="text/plain; charset=utf-8")


def text_error(message: str, status: int = 400) -> HttpResponse:
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


@dataclass
class QueueStatus:
    """The query's place in the user's queue."""

    assignment: Assignment | None
    time_display: str
    progress: work.Progress | None
    next_assignment: Assignment | None


@dataclass
class Screen:
    """One member looking at a project's labelling screens, maybe at one query."""

    request: HttpRequest
    project: Project
    membership: Membership
    query: Query | None = None

    @property
    def user(self):
        return self.request.user

    @cached_property
    def can_label(self) -> bool:
        return can_label(self.membership)

    @cached_property
    def sees_all(self) -> bool:
        return sees_all_labels(self.membership)

    def require_labeller(self) -> None:
        if not self.can_label:
            raise PermissionDenied(_("Viewers cannot change labels."))

    @cached_property
    def grades(self) -> list[tuple[int, str]]:
        """(grade, label) of the project's scale, default labels in the user's language."""
        return self.project.shown_grade_labels

    def grade_label(self, grade: int | None) -> str:
        return dict(self.grades).get(grade, "") if grade is not None else ""

    def url(self, name: str) -> str:
        """The address of one of this query's labelling screens."""
        return reverse(f"annotator:{name}", args=[self.project.slug, self.query.pk])

    @cached_property
    def judge_url(self) -> str:
        return self.url("label_query_judge")

    def safe_next(self, fallback: str) -> str:
        """``next`` when it points back into this site, else ``fallback``."""
        request = self.request
        target = request.POST.get("next") or request.GET.get("next") or ""
        if target and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        ):
            return target
        return fallback

    # ------------------------------------------------------------------ chunkings

    @cached_property
    def chunking(self) -> Chunking | None:
        """The chunking the annotator picked (``?chunking=``), or None; unknown is a 404."""
        raw = self.request.GET.get("chunking") or self.request.POST.get("chunking")
        if not raw:
            return None
        try:
            return self.project.chunkings.get(pk=int(raw))
        except (ValueError, Chunking.DoesNotExist):
            raise Http404("No such chunking") from None

    @cached_property
    def chunkings(self) -> list[tuple[int, str]]:
        return list(self.project.chunkings.order_by("pk").values_list("pk", "name"))

    @cached_property
    def search_chunking(self) -> Chunking | None:
        """The chunking searched: the one picked, else the project's default."""
        return self.chunking or default_chunking(self.project)

    # ------------------------------------------------------------------ the query's labels

    @cached_property
    def pool_ids(self) -> list[int]:
        """The query's candidate chunks in the chosen chunking (run order, hidden)."""
        return candidate_chunk_ids(self.query, self.project.pool_depth, chunking=self.chunking)

    @cached_property
    def pool_spans(self) -> dict[int, tuple[int, int, int]]:
        """Each candidate chunk's (document pk, start, end), read once per request."""
        return chunk_spans(self.pool_ids)

    @cached_property
    def pool_groups(self) -> dict[int, list[int]]:
        """The pool as pieces of text: each card's chunk → the candidates it stands for."""
        return fold_pool(self.pool_ids, self.project.candidate_overlap, self.pool_spans)

    @cached_property
    def card_order(self) -> list[int]:
        """The cards' chunks in this annotator's stable shuffle of the pool."""
        groups = self.pool_groups
        return stable_shuffle(list(groups), annotator_id=self.user.pk, query_id=self.query.pk)

    @cached_property
    def repeats(self) -> dict[int, list[tuple[int, int, int]]]:
        """Per card, the parts of its text an earlier card shows (``pieces.repeated_parts``)."""
        return repeated_parts(self.card_order, self.pool_spans)

    def mark_repeats(self, cards: list[Card]) -> list[Card]:
        """Give pool cards the parts of their text that an earlier card shows."""
        for card in cards:
            card.repeats = self.repeats.get(card.chunk_pk, [])
        return cards

    @cached_property
    def candidates(self) -> list[Card]:
        """One card per piece of text, in this annotator's stable shuffle of the pool;
        text two cards share is shown by the first and named by the others."""
        return self.mark_repeats(chunk_cards(self, self.card_order, self.pool_groups))

    @cached_property
    def n_judged(self) -> int:
        """Cards judged directly or covered by another of the annotator's labels."""
        return sum(card.judged for card in self.candidates)

    @cached_property
    def my_evidence(self) -> list[EvidenceRow]:
        """The user's labels on the query that are not candidate cards of the screen."""
        return own_evidence(self.query, self.user, exclude_chunks=set(self.pool_groups))

    @cached_property
    def assignment(self) -> Assignment | None:
        return work.assignment_for(self.query, self.user) if self.can_label else None

    @cached_property
    def status(self) -> QueueStatus:
        assignment = self.assignment
        labeller = self.can_label
        return QueueStatus(
            assignment=assignment,
            time_display=duration(assignment.time_spent_seconds) if assignment else "",
            progress=work.progress(self.project, self.user) if labeller else None,
            next_assignment=(
                work.next_open(self.project, self.user, after=self.query) if labeller else None
            ),
        )

    def context(self, **extra) -> dict:
        """The template context every labelling template can rely on, plus ``extra``."""
        context = {
            "screen": self,
            "project": self.project,
            "membership": self.membership,
            "query": self.query,
            "grades": self.grades,
            "can_label": self.can_label,
            "sees_all": self.sees_all,
        }
        if self.query is not None:
            context |= {
                "judge_url": self.judge_url,
                "label_url": self.url("label_query"),
                "doc_url": self.url("label_query_document"),
                "search_url": self.url("label_query_search"),
                "status_url": self.url("label_query_status"),
            }
        return context | extra


def member_view(*methods: str) -> Callable:
    """Login, then project membership (404), then the HTTP method (405), then the query.

    The view is called as ``view(request, screen)``; a ``pk`` in the URL is the query's.
    """

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str, pk: int | None = None) -> HttpResponse:
            # Which card parts the project draws comes with the membership read.
            project, membership = get_project_for_user(request, slug, annotations=card_part_flags())
            if request.method not in methods:
                return HttpResponseNotAllowed(methods)
            query = None if pk is None else get_object_or_404(Query, project=project, pk=pk)
            return view(request, Screen(request, project, membership, query))

        return wrapper

    return decorator
