from django.core.management.base import BaseCommand, CommandError

from annotator.cli import project_named
from annotator.models import Chunking
from metrics.baseline import bm25_run
from metrics.models import Run


class Command(BaseCommand):
    help = "Compute the built-in BM25 run over a chunking (or the documents) of a project."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--chunking", help="name of the chunking to retrieve from")
        target.add_argument("--documents", action="store_true", help="retrieve documents")
        parser.add_argument("--name", help="run name (default: 'bm25 · <chunking>')")
        parser.add_argument("--k", type=int, default=100, help="results per query")
        parser.add_argument("--replace", action="store_true", help="replace a run of that name")

    def handle(self, *args, slug, chunking, documents, name, k, replace, **options):
        project = project_named(slug)
        target = None
        if chunking:
            target = Chunking.objects.filter(project=project, name=chunking).first()
            if target is None:
                names = ", ".join(project.chunkings.values_list("name", flat=True)) or "none"
                raise CommandError(f"no chunking {chunking!r} in {slug} (chunkings: {names})")
        if k < 1:
            raise CommandError("--k must be at least 1")
        run_name = name or (f"bm25 · {chunking}" if chunking else "bm25 · documents")
        if not replace and Run.objects.filter(project=project, name=run_name).exists():
            raise CommandError(f"a run named {run_name!r} exists; use --replace")
        run = bm25_run(project, chunking=target, name=run_name, k=k, replace=replace)
        self.stdout.write(f"{run.name}: {run.n_results} results for {run.n_queries} queries")
