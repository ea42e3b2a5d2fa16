"""The judging screen of one query, and the one address every label change is posted to.

A change answers with the fragment of the evidence it names (a chunk's card, a label's
row, a document's search result), the status line, and an ``HX-Trigger`` event
``labels-changed`` saying what changed; every other region of a screen that shows that
evidence (the judged counter, the evidence list, the other copy of a card, the document
view, the queue status) listens for the event and fetches itself again.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_htmx.http import trigger_client_event

from web.htmx import for_htmx
from web.sections import sections

from .. import assignments as work
from ..evidence import Evidence, EvidenceError, evidence_named
from ..labels import LabelChange, LabelConflict, NothingToUndo, change_label, keep_note, undo_change
from ..models import Granularity
from ..screen_parts import undo_elsewhere
from .cards import chunk_cards, document_results, own_row
from .forms import EvidenceFragmentForm, LabelChangeForm
from .pieces import describe
from .screen import Screen, bad_request, member_view, text_error

LABELS_CHANGED = "labels-changed"
CARD = "annotator/partials/label_card.html"
ROW = "annotator/partials/label_evidence_row.html"
RESULT = "annotator/partials/label_document_result.html"


@for_htmx("annotator/partials/label_judged_count.html", if_target="judged-count")
@for_htmx("annotator/partials/label_candidates.html")
@member_view("GET")
def label_query(request: HttpRequest, screen: Screen) -> HttpResponse:
    """The judging screen of one query: its candidate pool, graded with the keyboard."""
    work.mark_opened(screen.assignment)
    context = screen.context(
        cards=screen.candidates,
        n_judged=screen.n_judged,
        # What other apps add to the screen (the query's nuggets …).
        sections=sections("labelling", membership=screen.membership, query=screen.query),
    )
    return TemplateResponse(request, "annotator/label_query.html", context)


@member_view("GET", "POST")
def label_query_judge(request: HttpRequest, screen: Screen) -> HttpResponse:
    """GET: one piece of evidence as the screens show it, or the evidence list. POST: a change."""
    if request.method == "GET":
        return _evidence_fragment(request, screen)
    screen.require_labeller()
    form = LabelChangeForm(request.POST)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    try:
        change, message = _change(screen, data)
    except EvidenceError as error:
        if error.status == 404:
            raise Http404(str(error)) from None
        return text_error(str(error), error.status)
    except LabelConflict as conflict:
        return _conflict(request, screen, data, conflict)
    except NothingToUndo:
        # Not a relevance label's action: maybe an app's (a quality grade, screen_parts).
        undone = undo_elsewhere(screen, data["action_id"])
        if not request.htmx:
            return redirect(screen.safe_next(screen.url("label_query")))
        if undone is None:
            message = _("Nothing to undo: your last action did not change a label.")
            context = screen.context(message=message, oob=True)
            return TemplateResponse(request, "annotator/partials/label_judge_answer.html", context)
        context = screen.context(message=undone.message, error=undone.error, oob=True)
        response = TemplateResponse(request, "annotator/partials/label_judge_answer.html", context)
        for name, detail in undone.events.items():
            trigger_client_event(response, name, detail)
        return response
    # Committed: from here on the screen may say "saved".
    if not request.htmx:
        return redirect(screen.safe_next(screen.url("label_query")))
    context = screen.context(message=message, oob=True, **_answer(screen, data, change))
    response = TemplateResponse(request, "annotator/partials/label_judge_answer.html", context)
    if change.history is not None:
        trigger_client_event(response, LABELS_CHANGED, changed_event(change, undone=change.undone))
    return response


def conflict_message(screen: Screen, conflict: LabelConflict, *, undo: bool = False) -> str:
    """What a save (or an undo) that lost to another session's change is told."""
    if conflict.judgment is None:
        if undo:
            return _("This label was removed in another session; nothing was undone.")
        return _("This label was removed in another session; your change was not saved.")
    values = {
        "grade": conflict.judgment.grade,
        "label": screen.grade_label(conflict.judgment.grade),
    }
    if undo:
        return (
            _(
                "This label was changed in another session to %(grade)d · %(label)s; "
                "nothing was undone."
            )
            % values
        )
    return (
        _(
            "This label was changed in another session to %(grade)d · %(label)s; "
            "your change was not saved."
        )
        % values
    )


def _conflict(
    request: HttpRequest, screen: Screen, data: dict, conflict: LabelConflict
) -> HttpResponse:
    """The evidence as it is now (the newer grade) and why the save was refused (409).

    The answer also says that the label changed (``labels-changed``, marked ``conflict``),
    so every region showing it — the document view's page and document buttons with their
    versions, the evidence list — fetches itself again and the next click can succeed."""
    undo = data["action"] == "undo"
    message = conflict_message(screen, conflict, undo=undo)
    if not request.htmx:
        return text_error(message, 409)
    if conflict.evidence is not None:
        evidence = conflict.evidence
    else:
        try:
            evidence = evidence_named(query=screen.query, annotator=screen.user, data=data)
        except EvidenceError:  # the label the form named was removed meanwhile
            return text_error(message, 409)
    current = LabelChange(evidence, conflict.judgment, None)
    answer = {} if undo else _answer(screen, data, current, refused=message)
    context = screen.context(message=message, error=True, oob=True, **answer)
    # 200, so that htmx swaps in the newer grade; the status line says it was not saved.
    response = TemplateResponse(request, "annotator/partials/label_judge_answer.html", context)
    trigger_client_event(response, LABELS_CHANGED, conflict_event(evidence, conflict))
    return response


def conflict_event(evidence: Evidence, conflict: LabelConflict) -> dict:
    """``labels-changed`` for a change learnt of by a refused save: no history of ours."""
    return {
        "history": None,
        "undone": None,
        "conflict": True,
        "kind": evidence.granularity,
        "document": evidence.document.pk,
        "chunk": evidence.chunk.pk if evidence.chunk is not None else None,
        "judgment": conflict.judgment.pk if conflict.judgment is not None else None,
    }


def _change(screen: Screen, data: dict) -> tuple[LabelChange, str]:
    """Grade, remove or undo through the labels service; the change and what to tell the user."""
    query, user = screen.query, screen.user
    seconds = work.clamp_seconds(data.get("elapsed"))
    if data["action"] == "undo":
        change = undo_change(
            query=query,
            user=user,
            history_pk=data["history"],
            action_id=data["action_id"],
            seconds=seconds,
        )
        if change is None:
            raise EvidenceError("No such change", 404)
        return change, undone_message(screen, change, data.get("pos"))
    evidence = evidence_named(query=query, annotator=user, data=data)
    if _short_passage(screen, data, evidence):
        n = evidence.end - evidence.start
        raise EvidenceError(
            ngettext(
                "The selection is only %(n)d character long: confirm to save it as a passage.",
                "The selection is only %(n)d characters long: confirm to save it as a passage.",
                n,
            )
            % {"n": n}
        )
    if data["action"] == "keep":
        # A note on evidence not graded yet is kept until its first grade; on a graded
        # one it goes on the label as a logged change.
        kept = keep_note(
            query=query,
            annotator=user,
            evidence=evidence,
            text=data["note"],
            action_id=data["action_id"],
        )
        if kept is not None:
            return kept, _("Note saved.")
        if data["note"].strip():
            return LabelChange(evidence, None, None), _(
                "Note kept: it is saved with this card's next grade."
            )
        return LabelChange(evidence, None, None), _("Note removed.")
    version = data.get("version") or None
    if data["action"] == "delete":
        change = change_label(
            query=query,
            annotator=user,
            evidence=evidence,
            grade=None,
            seconds=seconds,
            version=version,
            action_id=data["action_id"],
        )
        return change, _("Label removed.")
    change = change_label(
        query=query,
        annotator=user,
        evidence=evidence,
        grade=data["grade"],
        note=data["note"] if "note" in screen.request.POST else None,
        seconds=seconds,
        suggestion_shown=bool(data.get("suggested")) and screen.project.post_edit,
        version=version,
        action_id=data["action_id"],
    )
    label = screen.grade_label(change.judgment.grade)
    return change, _("Saved: %(grade)d · %(label)s") % {
        "grade": change.judgment.grade,
        "label": label,
    }


def _short_passage(screen: Screen, data: dict, evidence: Evidence) -> bool:
    """A new passage shorter than the project asks to confirm, not confirmed (a mis-drag)."""
    if data["action"] != "grade" or data.get("judgment") or data.get("short_ok"):
        return False
    if evidence.granularity != Granularity.PASSAGE:
        return False
    return evidence.end - evidence.start < screen.project.short_passage


def undone_message(screen: Screen, change: LabelChange, position: int | None) -> str:
    """What an undo did, and where: "Undone on card 8: back to 1 · Related …"."""
    if change.history is None:
        return _("Nothing to undo.")
    evidence = change.evidence
    if position:
        where = _("card %(n)d") % {"n": position}
    else:
        pages = evidence.document.page_starts
        what = describe(
            evidence.granularity,
            evidence.start,
            evidence.end,
            pages,
            evidence.chunk.chunk_id if evidence.chunk is not None else "",
        )
        where = _("%(what)s of %(document)s") % {
            "what": what,
            "document": evidence.document.title or evidence.document.doc_id,
        }
    judgment = change.judgment
    if judgment is None:
        return _("Undone on %(where)s: no grade any more.") % {"where": where}
    return _("Undone on %(where)s: back to %(grade)d · %(label)s.") % {
        "where": where,
        "grade": judgment.grade,
        "label": screen.grade_label(judgment.grade),
    }


def _answer(screen: Screen, data: dict, change: LabelChange, *, refused: str = "") -> dict:
    """The fragment of the evidence the form named, as it looks after the change.

    A save ``refused`` as a conflict shows why beside the evidence, and a note being typed
    stays in its open box (with the newer version, so that saving it again can succeed)."""
    if data["action"] == "undo":
        return {}  # the undo form shows nothing: every region refreshes on the event
    evidence = change.evidence
    answer: dict = {"refused": refused}
    if refused and "note" in screen.request.POST:
        answer["draft_note"] = data["note"]
    if data.get("chunk"):
        cards = screen.mark_repeats(chunk_cards(screen, [evidence.chunk.pk], screen.pool_groups))
        return answer | {"card": next(iter(cards), None), "position": data.get("pos")}
    if evidence.granularity == Granularity.DOCUMENT and not data.get("judgment"):
        result = next(iter(document_results(screen, [evidence.document.pk])), None)
        return answer | {"result": result}
    judgment = change.judgment
    return answer | {"row": own_row(screen.query, screen.user, judgment.pk) if judgment else None}


def changed_event(change: LabelChange, *, undone: int | None = None) -> dict:
    """The detail of ``labels-changed``: the logged change and the evidence it touched."""
    evidence = change.evidence
    return {
        "history": change.history.pk,
        "undone": undone,
        "kind": evidence.granularity,
        "document": evidence.document.pk,
        "chunk": evidence.chunk.pk if evidence.chunk is not None else None,
        "judgment": change.judgment.pk if change.judgment is not None else None,
    }


def _evidence_fragment(request: HttpRequest, screen: Screen) -> HttpResponse:
    """One label's row, one chunk's card, one document's result, or the evidence list."""
    form = EvidenceFragmentForm(request.GET)
    if not form.is_valid():
        return bad_request(form)
    data = form.cleaned_data
    if data["judgment"]:
        row = own_row(screen.query, screen.user, data["judgment"])
        if row is None:
            raise Http404("No such label")
        return TemplateResponse(request, ROW, screen.context(row=row))
    if data["chunk"]:
        cards = screen.mark_repeats(chunk_cards(screen, [data["chunk"]], screen.pool_groups))
        if not cards:
            raise Http404("No such chunk")
        context = screen.context(card=cards[0], position=data["pos"])
        return TemplateResponse(request, CARD, context)
    if data["document"]:
        results = document_results(screen, [data["document"]])
        if not results:
            raise Http404("No such document")
        return TemplateResponse(request, RESULT, screen.context(result=results[0]))
    context = screen.context(my_evidence=screen.my_evidence)
    return TemplateResponse(request, "annotator/partials/label_evidence_list.html", context)
