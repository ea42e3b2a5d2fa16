"""What a web process keeps for its whole life, put out of the cyclic collector's way.

A web process keeps its modules, compiled templates and per-process caches
(``annotator.caches``: levels' units, agreement reports, disputes) for as long as it
runs: hundreds of thousands of container objects, more as projects grow. CPython's
collector walks every one of them in each full collection, and a request that allocates
many objects sets one off: 100 ms or more spent on whichever request is running (the
warm p95s of the scale benchmark, docs/benchmarks.md). So a full collection that took
``ASSAY_GC_FREEZE_MS`` or more is noted, and after that request the process collects
once (garbage is not kept) and freezes what survives (``gc.freeze``): later collections
skip it, and take as long as what has grown since.

Frozen objects are still freed when nothing refers to them (an evicted cache entry goes
at once), but not when they die in a reference cycle. The requests in flight at a
freeze can be such objects (a request and its message storage refer to each other), so
a freeze follows only a slow full collection, never every request.
"""

from __future__ import annotations

import gc
import time


class LongLived:
    """Times the collector's full collections; freezes after one that was slow."""

    def __init__(self) -> None:
        self.started = 0.0
        self.longest = 0.0  # seconds: the slowest full collection since the last check

    def watch(self, phase: str, info: dict) -> None:
        """A ``gc.callbacks`` entry: it notes how long each full collection took."""
        if info["generation"] != 2:
            return
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.longest = max(self.longest, time.perf_counter() - self.started)

    def freeze_if_slow(self, limit_ms: float) -> bool:
        """Collect, then freeze what survives, when a full collection since the last
        check took at least ``limit_ms`` (0: never); whether it did."""
        slow = limit_ms > 0 and self.longest * 1000 >= limit_ms
        if slow:
            gc.collect()
            gc.freeze()
        self.longest = 0.0
        return slow


full_collections = LongLived()


def after_request(sender, **kwargs) -> None:
    """``request_finished`` receiver: freeze after a slow full collection, as settings say."""
    from django.conf import settings

    full_collections.freeze_if_slow(settings.ASSAY_GC_FREEZE_MS)
