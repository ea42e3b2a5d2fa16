from django.apps import AppConfig


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = "Annotator"
    default_auto_field = "django.db.models.BigAutoField"
