"""What a long job needs to survive its worker: a lease (``operations.leases``)."""

from __future__ import annotations

from django.db import models


class Leased(models.Model):
    """A job run by one worker at a time: the worker renews ``lease_until`` while it works;
    once it has passed, the next free worker takes the job over (``takeovers`` counts)."""

    worker = models.CharField(max_length=100, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    takeovers = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    @property
    def lease_alive(self) -> bool:
        from django.utils import timezone

        return self.lease_until is not None and self.lease_until > timezone.now()
