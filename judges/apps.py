from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "LLM judges"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The annotator's queue offers "judge disagrees / unsure first" by registration,
        # so annotator never imports judges.
        from annotator.extensions import register_suggestion_source

        from . import engine, services  # noqa: F401  (problems' codes: pages show stored ones)
        from .priorities import register
        from .suggestions import judge_suggestions

        register()
        register_suggestion_source(judge_suggestions)
        # Quality jobs: an LLM judge grading a quality dimension (judges.quality_jobs).
        from . import quality_jobs
        from .models import JobKind

        engine.register_runner(JobKind.QUALITY, quality_jobs.run_quality_job)
        from web.sections import register_section

        from .quality_views import quality_settings_section

        register_section(
            "quality_settings", "judges/partials/quality_settings.html", quality_settings_section
        )
        # A judging job whose worker died is taken over by the next free worker.
        from operations.leases import LeasedKind
        from operations.leases import register as register_leased

        from .models import JobStatus, JudgeJob

        register_leased(
            LeasedKind("judge", JudgeJob, JobStatus.RUNNING, engine.take_over, queue="judging")
        )
