from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "LLM judges"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The annotator's queue offers "judge disagrees / unsure first" by registration,
        # so annotator never imports judges.
        from .priorities import register

        register()
