"""The per-process cache of derived arrays every page shares (runs ranked at a level, a
level's units, labels and grades per label revision, agreement reports), bounded by
``ASSAY_RUN_CACHE_MB``; see ``numerics.array_cache``."""

from __future__ import annotations

from django.conf import settings

from numerics.array_cache import ArrayCache

cache = ArrayCache(settings.ASSAY_RUN_CACHE_BYTES)
