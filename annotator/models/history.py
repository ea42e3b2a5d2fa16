"""The one rule of every history table: rows are added, never changed or deleted."""

from __future__ import annotations

from django.db import models


class AppendOnlyHistory(models.Model):
    """A history table: saving a row again or deleting it raises. ``history_name`` names
    the table in the error ("Judgment history is append-only")."""

    history_name = "History"

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError(f"{self.history_name} is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError(f"{self.history_name} is append-only")
