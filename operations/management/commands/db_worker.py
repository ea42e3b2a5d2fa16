"""``manage.py db_worker``: django-tasks' worker, kept alive through any failure."""

from django_tasks_db.management.commands import db_worker

from operations.worker import ResilientWorker


class Command(db_worker.Command):
    help = "Run the background worker (imports); it survives any failure of a task or the database"

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
