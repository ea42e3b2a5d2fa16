from django.apps import AppConfig


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = "Metrics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The import page offers retrieval runs and the labelling pool draws on stored
        # runs through annotator's registries, so annotator never imports metrics.
        from annotator.extensions import register_kind, register_ranking_source

        from . import quality_sections, trec_files  # noqa: F401  (trec_files: its problems' codes)
        from .rankings import pool_rankings
        from .run_import import RUN_KIND

        register_kind(RUN_KIND)
        register_ranking_source(pool_rankings)
        quality_sections.register_all()  # shares of the top k by quality grade
