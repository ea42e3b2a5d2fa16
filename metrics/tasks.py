"""Background work on runs: each imported run's index file written at its own units."""

from __future__ import annotations

from django.db import transaction
from django_tasks import task

from annotator import kept_files
from gold import agreement_items, disagreements, kept_units
from gold.units import level_units

from . import kept_values, label_state, run_indexes
from .evaluation import own_level
from .models import Run, RunLevel


def index_after_import(run: Run) -> None:
    """Queue the writing of the run's index file once the import's transaction commits,
    so that the first dashboard of any process reads the index instead of building it."""
    pk = run.pk
    transaction.on_commit(lambda: index_imported_run.enqueue(pk))


@task()
def index_imported_run(run_pk: int) -> None:
    write_own_index(run_pk)


def write_own_index(run_pk: int) -> bool:
    """Write the run's index file at its own units (its chunking's chunks, or documents)
    and delete the files of runs and projects that are gone; False when the run no longer
    exists."""
    runs = Run.objects.without_results().select_related("project", "chunking")
    run = runs.filter(pk=run_pk).first()
    if run is None:
        return False
    # The level's units file is written too, for the next process's first dashboard.
    units = level_units(run.project, own_level(run), in_memory=False)
    run_indexes.keep_file(run, units)
    if run.level == RunLevel.CHUNK:  # the labelling pool reads chunk runs only
        run_indexes.keep_stored_file(run)
    run_indexes.prune()
    kept_units.prune()
    disagreements.prune()
    agreement_items.prune()
    label_state.prune()
    for kind in kept_values.KINDS:
        kept_values.prune(kind)
    kept_files.prune_project_files("agreement")
    kept_files.remove_stale_parts()
    return True
