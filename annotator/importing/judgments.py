"""Importing existing labels (qrels, JSONL gold lines, CSV, XLSX) for a named annotator."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models.functions import Length

from formats import FileRejected, LineErrors, judgments, repeated
from numerics.grades import is_grade

from ..labels import bulk_create_judgments
from ..models import Chunk, Chunking, Granularity, Judgment, Membership, Project, Role
from .common import ImportResult, Rows, Tick


def _annotator_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 150:
        raise FileRejected(["labels need an annotator name (up to 150 characters)"])
    return name


def existing_annotator(project: Project, name: str):
    """The account labels would go to, without writing anything: a project member, a
    pseudo-annotator, or None when the name is new. An account outside the project that
    can log in is refused."""
    name = _annotator_name(name)
    user = get_user_model().objects.filter(username=name).first()
    if (
        user is not None
        and user.has_usable_password()
        and not Membership.objects.filter(project=project, user=user).exists()
    ):
        raise FileRejected(
            [f"{name!r} is an account outside this project; choose another annotator name"]
        )
    return user


def label_annotator(project: Project, name: str):
    """The user labels are attributed to: a project member, or a pseudo-annotator
    (created when new) that holds labels but cannot log in."""
    User = get_user_model()
    user = existing_annotator(project, name)
    if user is None:
        user = User(username=_annotator_name(name))
        user.set_unusable_password()
        user.save()
    if not Membership.objects.filter(project=project, user=user).exists():
        Membership.objects.create(project=project, user=user, role=Role.ANNOTATOR, is_pseudo=True)
    return user


def import_labels(
    project: Project,
    rows: Rows,
    *,
    annotator: str,
    level: str,
    chunking: str | None = None,
    changed_by=None,
    tick: Tick = None,
) -> ImportResult:
    if level not in ("chunk", "document"):
        raise FileRejected([f"level must be chunk or document, not {level!r}"])
    units: dict[str, tuple]
    if level == "chunk":
        chunking_obj = Chunking.objects.filter(project=project, name=chunking or "").first()
        if chunking_obj is None:
            raise FileRejected([f"chunk-level labels need an existing chunking, not {chunking!r}"])
        units = {
            chunk_id: (pk, doc_pk, start, end)
            for chunk_id, pk, doc_pk, start, end in Chunk.objects.filter(
                chunking=chunking_obj
            ).values_list("chunk_id", "pk", "document_id", "start", "end")
        }
    else:
        units = {
            doc_id: (None, pk, 0, length)
            for doc_id, pk, length in project.documents.annotate(length=Length("text"))
            .values_list("doc_id", "pk", "length")
            .iterator()
        }
    queries = dict(project.queries.values_list("qid", "pk"))
    errors = LineErrors()
    # Read and check the whole file first, outside any transaction (no write lock held).
    user = existing_annotator(project, annotator)
    existing = Judgment.objects.filter(query__project=project, annotator=user, granularity=level)
    taken = {
        (q, c if level == "chunk" else d)
        for q, c, d in existing.values_list("query_id", "chunk_id", "document_id")
    }
    seen: dict[tuple[int, int], int] = {}
    new: list[Judgment] = []
    for line, qid, item, grade in judgments(rows, errors):
        if tick:
            tick()
        query_pk = queries.get(qid)
        if query_pk is None:
            errors.add(line, f"unknown query id {qid!r}")
            continue
        unit = units.get(item)
        if unit is None:
            what = "chunk" if level == "chunk" else "document"
            errors.add(line, f"unknown {what} id {item!r}")
            continue
        if not is_grade(grade):
            errors.add(line, f"grade must be 0, 1, 2 or 3, not {grade}")
            continue
        chunk_pk, doc_pk, start, end = unit
        key = (query_pk, chunk_pk if level == "chunk" else doc_pk)
        if key in taken:
            errors.add(line, f"{annotator} already has a label for {qid} / {item}")
            continue
        if key in seen:
            errors.add(line, repeated(qid, item, seen[key]))
            continue
        seen[key] = line
        if errors:
            continue
        new.append(
            Judgment(
                query_id=query_pk,
                granularity=Granularity.CHUNK if level == "chunk" else Granularity.DOCUMENT,
                document_id=doc_pk,
                start=start,
                end=end,
                # A bare Chunk carrying its id spares history one query per label.
                chunk=Chunk(pk=chunk_pk, chunk_id=item) if chunk_pk else None,
                grade=grade,
            )
        )
    if not seen and not errors:
        errors.add(0, "the file holds no labels")
    errors.raise_if_any()
    try:
        with transaction.atomic():
            user = label_annotator(project, annotator)
            for judgment in new:
                judgment.annotator = user
            created = bulk_create_judgments(new, changed_by=changed_by or user)
    except IntegrityError:
        # A label for one of these units was saved while the file was read.
        raise FileRejected(
            [f"{annotator} labelled some of these items meanwhile; import the file again"]
        ) from None
    return ImportResult("labels", created, detail=annotator)
