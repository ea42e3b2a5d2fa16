from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The import page offers retrieval runs through annotator's registry, so
        # annotator never imports metrics.
        from annotator.importing import register_kind

        from .run_import import RUN_KIND

        register_kind(RUN_KIND)
