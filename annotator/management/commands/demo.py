"""Build the demo projects from the public datasets in data/demo (idempotent)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from annotator.assignments import assign_each
from annotator.chunker import window_spans
from annotator.importing import import_chunks, import_queries, run_import
from annotator.models import Chunking, Judgment, Membership, Project, Role
from metrics.baseline import bm25_run
from metrics.models import Run
from metrics.run_import import import_run

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
    },
]


class Command(BaseCommand):
    help = "Create the Cranfield and LeCaRD demo projects with demo users (idempotent)."

    def handle(self, *args, **options):
        users = self._users()
        for spec in PROJECTS:
            self._project(spec, users)
        self.stdout.write(self.style.SUCCESS("Demo ready. Log in with:"))
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<16} password {DEMO_PASSWORD}   ({role.label})")

    def _users(self):
        User = get_user_model()
        users = {}
        for username, _role in DEMO_USERS:
            user, created = User.objects.get_or_create(username=username)
            if created or not user.has_usable_password():
                user.set_password(DEMO_PASSWORD)
                user.save()
            users[username] = user
        return users

    def _project(self, spec: dict, users: dict) -> None:
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
            self.stdout.write(f"{project.slug}: {result.created} documents")
        if not project.queries.exists():
            tags = self._query_tags(folder / spec["tags_file"]) if spec["tags_file"] else {}
            rows = (
                (number, {**row, "tags": tags.get(row["qid"], [])})
                for number, row in enumerate(_read_jsonl(folder / "queries.jsonl"), start=1)
            )
            result = import_queries(project, rows)
            self.stdout.write(f"{project.slug}: {result.created} queries")
        for size, overlap in CHUNKINGS:
            chunking = self._chunking(project, size, overlap)
            if not Run.objects.filter(project=project, chunking=chunking).exists():
                run = bm25_run(project, chunking=chunking)
                self.stdout.write(f"{project.slug}: run {run.name}, {run.n_results} results")
        if not Judgment.objects.filter(
            query__project=project, annotator__username=spec["assessors"]
        ).exists():
            result = run_import(
                "labels",
                project,
                folder / "qrels.txt",
                options={"annotator": spec["assessors"], "level": "document"},
            )
            self.stdout.write(f"{project.slug}: {result.created} labels by {spec['assessors']}")
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
                self.stdout.write(f"{project.slug}: run {run.name}, {run.n_results} results")

    def _chunking(self, project: Project, size: int, overlap: int) -> Chunking:
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
        self.stdout.write(f"{project.slug}: {result.created} chunks in {name}")
        return Chunking.objects.get(project=project, name=name)

    @staticmethod
    def _query_tags(path: Path) -> dict[str, list[str]]:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle, delimiter="\t")
            next(reader)
            return {
                qid: [c.strip() for c in charges.split("|") if c.strip()] for qid, charges in reader
            }


def _read_jsonl(path: Path):
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
