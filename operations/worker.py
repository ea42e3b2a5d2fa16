"""The background worker that runs imports: one that no failure can stop.

django-tasks' ``db_worker`` loop ends on any database error outside a task (claiming the
next task while SQLite is busy, for instance), and the imports queued after it then wait
for ever. This worker logs such a failure, closes its connections, waits and goes on; a
task that raises is marked failed with its reason and the worker takes the next one.
"""

from __future__ import annotations

import logging
import time

from django.db import connections
from django_tasks_db.management.commands.db_worker import Worker

logger = logging.getLogger("assay.worker")

RETRY_SECONDS = 1.0


class ResilientWorker(Worker):
    def run(self) -> None:
        while self.running:
            try:
                super().run()
                return  # batch mode or --max-tasks ended the loop
            except Exception:
                logger.exception("worker %s: the task loop failed; retrying", self.worker_id)
                for connection in connections.all(initialized_only=True):
                    connection.close()
                time.sleep(max(self.interval, RETRY_SECONDS))
                self.startup_delay = False

    def run_task(self, db_task_result) -> None:
        try:
            super().run_task(db_task_result)
        except Exception:
            # Recording the outcome failed even after django-tasks' own retries; the task
            # stays claimed, but this worker lives on to run the others.
            logger.exception(
                "worker %s: could not record task %s", self.worker_id, db_task_result.id
            )
