"""Leases: a running job belongs to the worker that renews its lease, and no longer.

A worker that starts a job stamps it with its name and a lease of
``ASSAY_JOB_LEASE_SECONDS``; a thread renews the lease every third of that while the job
runs. A worker killed outright (``kill -9``, a machine lost) stops renewing: once the lease
has passed, the next free worker claims the job (one conditional update, so only one
worker can) and continues it through the job kind's ``take_over``. Writers check that they
still hold the lease in the transaction that writes, so a worker that lost its job writes
nothing more.

Job kinds register here (``register``) from their apps, so this module imports none of
them. ``STOPPING`` is set when the worker was asked to stop (SIGTERM): jobs take no new
work, let what is in flight finish within ``ASSAY_WORKER_GRACE_SECONDS`` and pause.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

log = logging.getLogger("assay.worker")

STOPPING = threading.Event()
_worker_name = f"{socket.gethostname()}:{os.getpid()}"


def worker_name() -> str:
    """This process's name on the jobs it runs: host and process id."""
    return _worker_name


def set_worker_name(name: str) -> None:
    global _worker_name
    _worker_name = name[:100]


def lease_seconds() -> float:
    return float(getattr(settings, "ASSAY_JOB_LEASE_SECONDS", 60))


def grace_seconds() -> float:
    return min(10.0, float(getattr(settings, "ASSAY_WORKER_GRACE_SECONDS", 8)))


def lease_fields(*, now=None) -> dict:
    """The fields that give a job to this worker for one lease."""
    now = now or timezone.now()
    return {
        "worker": worker_name(),
        "lease_until": now + timedelta(seconds=lease_seconds()),
        "heartbeat_at": now,
    }


def expired(now=None) -> Q:
    """Jobs whose lease has passed (or that never had one)."""
    now = now or timezone.now()
    return Q(lease_until__lt=now) | Q(lease_until__isnull=True)


@dataclass(frozen=True)
class LeasedKind:
    name: str
    model: type
    running: str  # the status of a job a worker is on
    take_over: Callable[[int], None]  # continue a job this worker has just claimed
    queue: str = "default"  # the task queue its jobs run on: its workers take them over


_KINDS: dict[str, LeasedKind] = {}


def register(kind: LeasedKind) -> None:
    _KINDS[kind.name] = kind


def kinds() -> list[LeasedKind]:
    return list(_KINDS.values())


def renew(model, pk: int) -> bool:
    """Extend this worker's lease on the job; False when the job is no longer its own."""
    now = timezone.now()
    return bool(
        model.objects.filter(pk=pk, worker=worker_name()).update(
            lease_until=now + timedelta(seconds=lease_seconds()), heartbeat_at=now
        )
    )


def holds(model, pk: int, *, lock: bool = False) -> bool:
    """Whether this worker still holds the job (inside a transaction, ``lock`` locks the row
    so no one claims it before the transaction ends)."""
    rows = model.objects.filter(pk=pk, worker=worker_name())
    if lock:
        rows = rows.select_for_update()
    return rows.exists()


class Heartbeat:
    """Renews the lease on one job from a thread while the job runs; ``lost`` is set when
    another worker took the job (this one then writes nothing more)."""

    def __init__(self, model, pk: int):
        self.model, self.pk = model, pk
        self.lost = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{pk}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._done.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        interval = max(0.2, lease_seconds() / 3)
        try:
            while not self._done.wait(interval):
                try:
                    if not renew(self.model, self.pk):
                        self.lost.set()
                        log.warning("job %s: its lease was taken by another worker", self.pk)
                        return
                except Exception:  # a busy database: try again at the next beat
                    log.exception("job %s: could not renew its lease", self.pk)
        finally:
            connection.close()


def take_over_one(queues: list[str] | None = None, excluded: list[str] = ()) -> bool:
    """Claim one running job whose lease has passed, of a kind whose queue this worker
    serves (``queues`` None or with "*": all but ``excluded``), and continue it here;
    False when there is none."""
    for kind in kinds():
        every = queues is None or "*" in queues
        if (not every and kind.queue not in queues) or kind.queue in excluded:
            continue
        now = timezone.now()
        stale = (
            kind.model.objects.filter(status=kind.running)
            .filter(expired(now))
            .order_by("pk")
            .values_list("pk", "worker")[:10]
        )
        for pk, previous in stale:
            claimed = (
                kind.model.objects.filter(pk=pk, status=kind.running, worker=previous)
                .filter(expired(now))
                .update(**lease_fields(now=now), takeovers=F("takeovers") + 1)
            )
            if claimed:
                log.warning(
                    "%s job %s: lease of %s expired; %s takes it over",
                    kind.name,
                    pk,
                    previous or "no worker",
                    worker_name(),
                )
                kind.take_over(pk)
                return True
    return False
