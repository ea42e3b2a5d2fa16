"""The address the labelling screens' quality rows are drawn from and posted to.

``p/<slug>/label/<pk>/quality/``: GET ``?document=`` draws that document's rows (a row
refreshing itself after a grade of its source was saved elsewhere on the screen); POST sets
or removes (``action=delete``) the user's grade of the document's source on a dimension,
with the version the row showed (a stale one is refused and the saved grade shown, 200
with the status line saying so, as for relevance labels), the screen's action id (the undo
key finds it, ``undo_from_screen``) and the seconds spent (added to the query's assignment).
Every answer that changed something sends ``quality-changed`` with the source's token.
"""

from __future__ import annotations

from django import forms
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django_htmx.http import trigger_client_event

from annotator import assignments as work
from annotator.extensions import Undone
from annotator.labelling.screen import Screen, bad_request, member_view, text_error
from annotator.models import Document
from web.fields import WholeField

from .card_html import draw_card_quality
from .grades import (
    NothingToUndo,
    QualityConflict,
    QualityError,
    QualitySource,
    change_quality,
    source_for,
    undo_quality,
)
from .labelling import (
    QUALITY_CHANGED,
    changed_event,
    conflict_message,
    part_context,
    quality_rows,
    saved_message,
)
from .models import QualityDimension, QualityHistory
from .screens import labelling_section

PART = "quality/partials/label_quality_answer.html"


class QualityGradeForm(forms.Form):
    """A quality grade from a labelling screen: every field checked (bad → 400)."""

    document = WholeField(min_value=1)
    dimension = forms.SlugField(max_length=40, required=False)
    grade = WholeField(min_value=0, required=False)
    action = forms.ChoiceField(choices=[("grade", "grade"), ("delete", "delete")], required=False)
    version = forms.CharField(max_length=64, required=False)
    action_id = forms.RegexField(required=False, regex=r"^[0-9a-f]{8,40}$", max_length=40)
    elapsed = forms.CharField(max_length=40, required=False)

    def __init__(self, *args, project=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        data["action"] = data.get("action") or "grade"
        dimension = QualityDimension.objects.filter(
            project=self.project, key=data.get("dimension") or ""
        ).first()
        if dimension is None:
            raise forms.ValidationError(_("This project has no such quality dimension."))
        data["dimension"] = dimension
        if data["action"] == "grade":
            grade = data.get("grade")
            if grade is None or grade > dimension.max_grade:
                raise forms.ValidationError(
                    _("A grade of %(name)s is a whole number from 0 to %(max)d.")
                    % {"name": dimension.shown_name, "max": dimension.max_grade}
                )
        return data


class DocumentForm(forms.Form):
    document = WholeField(min_value=1, required=False)


def _document(screen: Screen, pk: int) -> Document:
    document = (
        Document.objects.filter(project=screen.project, pk=pk)
        .only("pk", "doc_id", "metadata")
        .first()
    )
    if document is None:
        raise Http404("No such document")
    return document


def _part(request, screen: Screen, document: Document, *, refused: dict | None = None, **extra):
    """The document's quality rows; ``refused``: the dimension key whose save was refused,
    and why (shown beside that row)."""
    rows = quality_rows(screen, [document.pk]).get(document.pk, [])
    for row in rows:
        if refused and row.dimension.key == refused["dimension"]:
            row.refused = refused["message"]
    part = draw_card_quality(part_context(screen, rows, document.pk))
    return TemplateResponse(request, PART, screen.context(part=part, rows=rows, **extra))


@member_view("GET", "POST")
def label_query_quality(request: HttpRequest, screen: Screen) -> HttpResponse:
    """GET: a document's quality rows (without ``?document=``, the keys' help); POST: a grade."""
    if request.method == "GET":
        form = DocumentForm(request.GET)
        if not form.is_valid():
            return bad_request(form)
        if form.cleaned_data["document"] is None:
            context = screen.context(section=labelling_section(membership=screen.membership))
            return TemplateResponse(request, "quality/partials/labelling_keys.html", context)
        return _part(request, screen, _document(screen, form.cleaned_data["document"]))
    screen.require_labeller()
    form = QualityGradeForm(request.POST, project=screen.project)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    dimension = data["dimension"]
    document = _document(screen, data["document"])
    try:
        source = source_for(dimension, document)
    except QualityError as error:
        return text_error(str(error))
    grade = data["grade"] if data["action"] == "grade" else None
    seconds = work.clamp_seconds(data.get("elapsed"))
    try:
        with transaction.atomic():
            change = change_quality(
                dimension=dimension,
                annotator=screen.user,
                source=source,
                grade=grade,
                version=data.get("version") or None,
                action_id=data.get("action_id") or "",
            )
            work.add_time(screen.assignment, seconds)
    except QualityConflict as conflict:
        message = conflict_message(dimension, conflict.current)
        if not request.htmx:
            return text_error(message, 409)
        refused = {"dimension": dimension.key, "message": message}
        response = _part(request, screen, document, refused=refused, message=message, error=True)
        detail = changed_event(dimension, source, conflict.current, None, conflict=True)
        trigger_client_event(response, QUALITY_CHANGED, detail)
        return response
    if not request.htmx:
        return redirect(screen.safe_next(screen.url("label_query")))
    response = _part(request, screen, document)
    rows = response.context_data["rows"]
    row = next(r for r in rows if r.dimension.pk == dimension.pk)
    response.context_data["message"] = saved_message(row)
    if change.history is not None:
        detail = changed_event(dimension, source, change.grade, change.history.pk)
        trigger_client_event(response, QUALITY_CHANGED, detail)
    return response


def undo_from_screen(*, screen: Screen, action_id: str) -> Undone | None:
    """Undo the user's quality change made by the screen's action ``action_id`` (the undo
    key, ``annotator.screen_parts``); None when that action changed no quality grade."""
    history = (
        QualityHistory.objects.select_related("dimension", "document")
        .filter(dimension__project=screen.project, annotator=screen.user, changed_by=screen.user)
        .filter(action_id=action_id)
        .order_by("-pk")
        .first()
    )
    if history is None:
        return None
    dimension = history.dimension
    source = QualitySource(document=history.document, site=history.site)
    try:
        change = undo_quality(project=screen.project, user=screen.user, action_id=action_id)
    except NothingToUndo:
        return None
    except QualityConflict as conflict:
        detail = changed_event(dimension, source, conflict.current, None, conflict=True)
        return Undone(
            message=conflict_message(dimension, conflict.current, undo=True),
            events={QUALITY_CHANGED: detail},
            error=True,
        )
    where = _("site %(site)s") % {"site": source.site} if source.site else source.name
    values = {"name": dimension.shown_name, "source": where}
    if change.grade is None:
        message = _("Undone: %(name)s of %(source)s has no grade any more.") % values
    else:
        message = _("Undone: %(name)s of %(source)s back to %(grade)d · %(label)s.") % {
            **values,
            "grade": change.grade.grade,
            "label": dimension.label(change.grade.grade),
        }
    history_pk = change.history.pk if change.history is not None else None
    detail = changed_event(dimension, source, change.grade, history_pk, undone=change.undone)
    return Undone(message=message, events={QUALITY_CHANGED: detail})
