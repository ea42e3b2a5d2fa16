"""Objects a process keeps are frozen out of the collector's full collections
(operations.long_lived): after a slow full collection what survives is frozen, garbage
is not, a frozen object whose last reference goes is still freed, and every request
checks."""

from __future__ import annotations

import gc
import weakref

import pytest
from django.test import override_settings

from annotator.caches import cache
from operations.long_lived import LongLived, full_collections

ANY_FULL_COLLECTION = 1e-9  # ms: every full collection counts as slow


class Kept:
    """A container object the collector tracks (and a weak reference can watch)."""


@pytest.fixture
def watcher():
    """A watcher of its own, registered like the app's; nothing frozen before or after."""
    gc.unfreeze()
    own = LongLived()
    gc.callbacks.append(own.watch)
    yield own
    gc.callbacks.remove(own.watch)
    gc.unfreeze()


def walked(value) -> bool:
    """Whether a full collection walks ``value`` (frozen objects are not listed)."""
    return any(o is value for o in gc.get_objects())


def test_after_a_slow_full_collection_what_survives_is_frozen(watcher):
    kept = [Kept() for _ in range(1_000)]
    gc.collect()
    assert walked(kept[0])
    assert watcher.longest > 0
    assert watcher.freeze_if_slow(ANY_FULL_COLLECTION) is True
    assert gc.get_freeze_count() >= len(kept)
    assert not walked(kept[0]) and not walked(kept)


def test_without_a_full_collection_since_the_last_check_nothing_is_frozen(watcher):
    gc.collect()
    watcher.freeze_if_slow(10**9)  # the check resets, whatever it decides
    assert watcher.freeze_if_slow(ANY_FULL_COLLECTION) is False
    assert gc.get_freeze_count() == 0


def test_a_quick_full_collection_or_turned_off_freezes_nothing(watcher):
    gc.collect()
    assert watcher.freeze_if_slow(10**9) is False
    gc.collect()
    assert watcher.freeze_if_slow(0) is False
    assert gc.get_freeze_count() == 0


def test_garbage_is_collected_not_frozen(watcher):
    gc.collect()
    cycle = Kept()
    cycle.itself = cycle
    ref = weakref.ref(cycle)
    del cycle
    assert ref() is not None  # only the collector frees a cycle
    watcher.freeze_if_slow(ANY_FULL_COLLECTION)
    assert ref() is None


def test_a_frozen_object_is_freed_when_its_last_reference_goes(watcher):
    value = Kept()
    ref = weakref.ref(value)
    gc.collect()
    watcher.freeze_if_slow(ANY_FULL_COLLECTION)
    frozen = gc.get_freeze_count()
    del value
    assert ref() is None
    assert gc.get_freeze_count() < frozen


@pytest.fixture
def app_watcher():
    """The app's own watcher (registered when the app loaded); nothing frozen after."""
    assert full_collections.watch in gc.callbacks
    gc.unfreeze()
    yield full_collections
    gc.unfreeze()


@pytest.mark.django_db
def test_a_request_after_a_slow_full_collection_freezes_the_cache(app_watcher, client):
    key = ("test-long-lived",)
    cache.put(key, Kept())
    ref = weakref.ref(cache.peek(key))
    gc.collect()  # a full collection, noted by the app's watcher
    with override_settings(ASSAY_GC_FREEZE_MS=ANY_FULL_COLLECTION):
        assert client.get("/accounts/login/").status_code == 200
    assert gc.get_freeze_count() > 0
    assert not walked(ref())
    cache.discard(lambda k: k == key)  # evicted: freed at once, frozen or not
    assert ref() is None


@pytest.mark.django_db
def test_turned_off_a_request_freezes_nothing(app_watcher, client):
    gc.collect()
    with override_settings(ASSAY_GC_FREEZE_MS=0):
        assert client.get("/accounts/login/").status_code == 200
    assert gc.get_freeze_count() == 0
