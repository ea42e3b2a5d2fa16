from django.apps import AppConfig


class QualityConfig(AppConfig):
    name = "quality"
    verbose_name = "Source quality"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from annotator.extensions import read_dimensions_with

        from .importing import import_quality
        from .screens import register_all as register_screens
        from .sections import register_all

        read_dimensions_with(import_quality)  # labels files whose rows name a dimension
        register_all()  # agreement per dimension
        register_screens()  # the quality row of the labelling screens' cards, its keys, undo
