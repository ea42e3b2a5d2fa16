from django.apps import AppConfig


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
