"""``manage.py db_worker``: django-tasks' worker, kept alive through any failure, taking
over the jobs of workers that died and pausing its own job on SIGTERM."""

import os
import sys
import threading

from django_tasks_db.management.commands import db_worker

from operations import leases
from operations.worker import ResilientWorker


class Command(db_worker.Command):
    help = (
        "Run the background worker (imports, judging); it survives any failure of a task or "
        "the database, continues the jobs of workers that died, and on SIGTERM pauses its "
        "job within the grace period and exits"
    )

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        # Every queue unless told: a lone worker runs imports and judging alike. Run one
        # worker per queue (--queue-name default, --queue-name judging) so that imports
        # never wait behind judging; bin/start does.
        parser.set_defaults(queue_name="*")

    def handle(self, *args, **options) -> None:
        # django-tasks builds its Worker by name inside handle(); point the name at ours.
        db_worker.Worker = ResilientWorker
        super().handle(*args, **options)
        if leases.STOPPING.is_set() and threading.active_count() > 1:
            # Calls still in flight past the grace period: their pairs stay waiting and
            # the job is paused, so the process need not wait for them.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
