"""`manage.py import_beir SLUG FOLDER [--split test] [--annotator NAME]`."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.importing.beir import import_beir
from formats import FileRejected


class Command(BaseCommand):
    help = (
        "Import a BEIR dataset folder: corpus.jsonl as documents, the queries its split's "
        "qrels judge, and qrels/<split>.tsv as document labels of a pseudo-annotator "
        "(beir-<split>); all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument(
            "folder", help="the dataset's folder (corpus.jsonl, queries.jsonl, qrels/)"
        )
        parser.add_argument("--split", default="test", help="the qrels split (default: test)")
        parser.add_argument("--annotator", default="", help="the labels' pseudo-annotator")

    def handle(self, *args, **options):
        project = project_named(options["slug"])
        try:
            results = import_beir(
                project, options["folder"], split=options["split"], annotator=options["annotator"]
            )
        except FileRejected as failure:
            where = f"{failure.source}: " if failure.source else ""
            raise CommandError(f"nothing imported: {where}\n" + "\n".join(failure.errors)) from None
        for kind, result in results.items():
            self.stdout.write(f"{project.slug}: {result.created} {kind} imported")
