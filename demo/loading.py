"""Building the demo projects and users from the public datasets in data/demo (idempotent)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotator.assignments import assign_each
from annotator.chunking import window_spans
from annotator.importing import import_chunks, import_queries, run_import
from annotator.models import Chunking, Judgment, Membership, Project, Role
from answers.models import AnswerRun
from formats import BadLine, Row, RowSource
from metrics.baseline import bm25_run
from metrics.models import Run
from metrics.run_import import import_run
from nuggets.models import Nugget
from quality.dimensions import offer_source_quality

from .documents import build_pdf_project

DEMO_DIR = Path(settings.BASE_DIR) / "data" / "demo"
DEMO_PASSWORD = "assay-demo"  # noqa: S105 - printed on purpose: local demo accounts
DEMO_USERS = [
    ("demo-owner", Role.OWNER),
    ("demo-annotator", Role.ANNOTATOR),
    ("demo-annotator2", Role.ANNOTATOR),
]
CHUNKINGS = [(256, 32), (512, 64)]

PROJECTS = [
    {
        "slug": "cranfield",
        "name": "Cranfield (aeronautics)",
        "description": (
            "Cranfield 1400: 1,400 aeronautics abstracts and 225 queries with graded "
            "judgements (Cleverdon et al., 1960s). English."
        ),
        "folder": "cranfield",
        "assessors": "cranfield-assessors",
        "tags_file": None,
    },
    {
        "slug": "lecard",
        "name": "LeCaRD (中文刑事案例)",
        "description": (
            "LeCaRD subset: 834 Chinese criminal cases and 25 query cases graded 0–3 by "
            "legal experts (Ma et al., 2021). 中文."
        ),
        "folder": "lecard",
        "assessors": "lecard-experts",
        "tags_file": "query_meta.tsv",
        # The issuing court is the documents' source (README: "Source quality").
        "quality_site_field": "author",
    },
]


Say = Callable[[str], None]


def build_demo(say: Say = print, success: Callable[[str], str] = str) -> None:
    """Create (or complete) the demo users and projects, telling ``say`` what was added."""
    users = _users()
    for spec in PROJECTS:
        _project(spec, users, say)
    build_pdf_project(DEMO_DIR / "constitution", users, DEMO_USERS, say)
    say(success("Demo ready. Log in with:"))
    for username, role in DEMO_USERS:
        say(f"  {username:<16} password {DEMO_PASSWORD}   ({role.label})")


def _users() -> dict:
    User = get_user_model()
    users = {}
    for username, _role in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created or not user.has_usable_password():
            user.set_password(DEMO_PASSWORD)
            user.save()
        users[username] = user
    return users


def _project(spec: dict, users: dict, say: Say) -> None:
    folder = DEMO_DIR / spec["folder"]
    with transaction.atomic():
        project, _ = Project.objects.get_or_create(
            slug=spec["slug"],
            defaults={"name": spec["name"], "description": spec["description"]},
        )
        for username, role in DEMO_USERS:
            Membership.objects.get_or_create(
                project=project, user=users[username], defaults={"role": role}
            )
    if not project.documents.exists():
        result = run_import("documents", project, folder / "documents.jsonl")
        say(f"{project.slug}: {result.created} documents")
    if not project.queries.exists():
        tags = _query_tags(folder / spec["tags_file"]) if spec["tags_file"] else {}
        rows = (
            (number, _with_tags(row, tags))
            for number, row in RowSource(folder / "queries.jsonl", "jsonl")
        )
        result = import_queries(project, rows)
        say(f"{project.slug}: {result.created} queries")
    for size, overlap in CHUNKINGS:
        chunking = _chunking(project, size, overlap, say)
        if not Run.objects.filter(project=project, chunking=chunking).exists():
            run = bm25_run(project, chunking=chunking)
            say(f"{project.slug}: run {run.name}, {run.n_results} results")
    if not Judgment.objects.filter(
        query__project=project, annotator__username=spec["assessors"]
    ).exists():
        result = run_import(
            "labels",
            project,
            folder / "qrels.txt",
            options={"annotator": spec["assessors"], "level": "document"},
        )
        say(f"{project.slug}: {result.created} labels by {spec['assessors']}")
    # Nuggets written for the demo from the relevant documents (the data's README says so).
    if not Nugget.objects.filter(query__project=project).exists():
        result = run_import(
            "nuggets",
            project,
            folder / "nuggets.jsonl",
            options={"author": users["demo-owner"]},
        )
        say(f"{project.slug}: {result.created} nuggets")
    if spec.get("quality_site_field"):
        _quality(project, folder, spec["quality_site_field"], say)
    # Answer runs constructed for the demo from the nuggets' passages (README: "Answers").
    for path in sorted((folder / "answers").glob("*.jsonl")):
        if not AnswerRun.objects.filter(project=project, name=path.stem).exists():
            run_import(
                "answers",
                project,
                path,
                options={"name": path.stem, "parameters": {"source": "constructed for the demo"}},
                source_name=path.name,
            )
            say(f"{project.slug}: answer run {path.stem}")
    # Both demo annotators get the first 20 queries, so "My queue" has work in it.
    annotators = [users[u].pk for u, role in DEMO_USERS if role == Role.ANNOTATOR]
    if not project.assignments.exists():
        first = list(project.queries.order_by("pk").values_list("pk", flat=True)[:20])
        assign_each(project, first, annotators, users["demo-owner"])
    # The datasets' public document-level runs, so dashboards have real peers to compare.
    for path in sorted((folder / "runs").glob("*.run")):
        if not Run.objects.filter(project=project, name=path.stem).exists():
            run = import_run(
                project,
                path,
                name=path.stem,
                parameters={"source": "public run shipped with the dataset"},
                keep_known=True,
            )
            say(f"{project.slug}: run {run.name}, {run.n_results} results")


def _quality(project: Project, folder: Path, site_field: str, say: Say) -> None:
    """The source-quality dimension per site (``site_field``) and the demo's grades."""
    dimension = offer_source_quality(project, site_field=site_field)
    if not dimension.grades.exists():
        result = run_import(
            "labels",
            project,
            folder / "quality.csv",
            options={"annotator": "demo-quality", "level": "document"},
        )
        say(f"{project.slug}: {result.created} source quality grades")


def _chunking(project: Project, size: int, overlap: int, say: Say) -> Chunking:
    name = f"tokens-{size}-{overlap}"
    existing = Chunking.objects.filter(project=project, name=name).first()
    if existing is not None:
        return existing
    parameters = {"size": size, "overlap": overlap, "unit": "token"}

    def rows():
        number = 0
        for doc_id, text in project.documents.values_list("doc_id", "text").iterator():
            for index, (start, end) in enumerate(window_spans(text, size, overlap)):
                number += 1
                yield (
                    number,
                    {
                        "chunk_id": f"{doc_id}#{index}",
                        "doc_id": doc_id,
                        "start": start,
                        "end": end,
                    },
                )

    result = import_chunks(project, rows(), chunking=name, parameters=parameters)
    say(f"{project.slug}: {result.created} chunks in {name}")
    return Chunking.objects.get(project=project, name=name)


def _query_tags(path: Path) -> dict[str, list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        return {
            qid: [c.strip() for c in charges.split("|") if c.strip()] for qid, charges in reader
        }


def _with_tags(row: Row, tags: dict[str, list[str]]) -> Row:
    if isinstance(row, BadLine):
        return row
    return {**row, "tags": tags.get(str(row.get("qid")), [])}
