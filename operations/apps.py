import gc

from django.apps import AppConfig
from django.core.signals import request_finished


class OperationsConfig(AppConfig):
    name = "operations"
    verbose_name = "Operations"

    def ready(self) -> None:
        from .long_lived import after_request, full_collections

        if full_collections.watch not in gc.callbacks:
            gc.callbacks.append(full_collections.watch)
        request_finished.connect(after_request, dispatch_uid="assay_freeze_long_lived")
