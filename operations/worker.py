"""The background worker that runs imports and judging jobs: one that no failure can stop.

django-tasks' ``db_worker`` loop ends on any database error outside a task (claiming the
next task while SQLite is busy, for instance), and the imports queued after it then wait
for ever. This worker logs such a failure, closes its connections, waits and goes on; a
task that raises is marked failed with its reason and the worker takes the next one.

Before each queued task it looks for a running job whose worker died (its lease passed,
``operations.leases``) and continues that one first. SIGTERM (or Ctrl+C) asks the job in
hand to stop: no new work, what is in flight finishes within the grace period, the job
pauses and the worker exits; a second signal exits at once.
"""

from __future__ import annotations

import logging
import time

from django.db import close_old_connections, connections
from django.db.utils import OperationalError
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from . import leases

logger = logging.getLogger("assay.worker")

RETRY_SECONDS = 1.0


class ResilientWorker(Worker):
    def shutdown(self, signum, frame) -> None:
        leases.STOPPING.set()
        super().shutdown(signum, frame)

    def run(self) -> None:
        logger.info("worker %s (%s) started", self.worker_id, leases.worker_name())
        while self.running:
            try:
                self._loop()
                return  # batch mode or --max-tasks ended the loop
            except Exception:
                logger.exception("worker %s: the task loop failed; retrying", self.worker_id)
                for connection in connections.all(initialized_only=True):
                    connection.close()
                time.sleep(max(self.interval, RETRY_SECONDS))

    def _take_over(self) -> bool:
        self.running_task = True
        try:
            return leases.take_over_one(self.queue_names, self.excluded_queue_names)
        except Exception:
            logger.exception("worker %s: taking over a job failed", self.worker_id)
            return True
        finally:
            self.running_task = False

    def _loop(self) -> None:
        """django-tasks' loop, with jobs whose worker died taken over first."""
        while self.running:
            close_old_connections()
            if self._take_over():
                continue
            if not self.running:
                return
            tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
            if not self.process_all_queues:
                tasks = tasks.filter(queue_name__in=self.queue_names)
            if self.excluded_queue_names:
                tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
            with exclusive_transaction(tasks.db):
                try:
                    task_result = tasks.get_locked()
                    retrieved = True
                    if task_result is not None:
                        task_result.claim(self.worker_id)
                except OperationalError as error:
                    retrieved = False
                    if not is_locked_database_exception(error):
                        raise
                    task_result = None
            if task_result is not None:
                self.run_task(task_result)
            if self.batch and retrieved and task_result is None:
                return
            if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                return
            close_old_connections()
            if self.running and not task_result:
                time.sleep(self.interval)

    def run_task(self, db_task_result) -> None:
        try:
            super().run_task(db_task_result)
        except Exception:
            # Recording the outcome failed even after django-tasks' own retries; the task
            # stays claimed, but this worker lives on to run the others.
            logger.exception(
                "worker %s: could not record task %s", self.worker_id, db_task_result.id
            )
