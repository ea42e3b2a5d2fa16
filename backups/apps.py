from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "backups"
    verbose_name = "Backups"

    def ready(self) -> None:
        from . import archive  # noqa: F401  (its problems' codes, shown wherever problems are)
