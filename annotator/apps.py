from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _sqlite_functions(sender, connection, **kwargs) -> None:
    """The functions SQLite's search triggers and queries call (migration 0010)."""
    if connection.vendor != "sqlite":
        return
    from .search_grams import sqlite_tokens

    raw = connection.connection
    raw.create_function("assay_grams", 1, sqlite_tokens, deterministic=True)
    raw.create_function("assay_lower", 1, lambda text: (text or "").lower(), deterministic=True)


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotator"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import csv

        from django.conf import settings

        # CSV fields may be as long as an upload (the csv module's default cap is 131,072
        # characters, too short for a long document); ``formats`` then caps each value at
        # ASSAY_MAX_DOCUMENT_CHARS with a message saying so.
        csv.field_size_limit(max(csv.field_size_limit(), settings.ASSAY_MAX_UPLOAD_BYTES))
        connection_created.connect(_sqlite_functions, dispatch_uid="assay_sqlite_functions")
        # Problems stored by import jobs are shown by code: every code is registered
        # where it is defined, so those modules are loaded in every process.
        # An import whose worker died is run again by the next free worker.
        from operations.leases import LeasedKind, register

        from . import (  # noqa: F401
            import_jobs,
            importing,
            revisions,
        )
        from .models import ImportJob, ImportStatus

        register(LeasedKind("import", ImportJob, ImportStatus.RUNNING, import_jobs.take_over))
