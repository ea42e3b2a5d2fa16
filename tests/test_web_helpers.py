"""The shared view helpers: page-or-partial choice and strict settings parsing."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.template.response import TemplateResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxMiddleware

from config.settings import default_run_cache_mb, env_bool, env_int, machine_memory_mb
from web.htmx import for_htmx


@for_htmx("partial.html")
def page_view(request):
    return TemplateResponse(request, "page.html", {})


@for_htmx("partial.html", if_target="table")
def targeted_view(request):
    return TemplateResponse(request, "page.html", {})


def _request(**headers):
    request = RequestFactory().get("/", **headers)
    HtmxMiddleware(lambda r: None)(request)
    return request


def test_full_page_without_htmx_and_partial_with_it():
    assert page_view(_request()).template_name == "page.html"
    assert page_view(_request(HTTP_HX_REQUEST="true")).template_name == "partial.html"


def test_partial_only_for_its_target():
    other = _request(HTTP_HX_REQUEST="true", HTTP_HX_TARGET="chart")
    aimed = _request(HTTP_HX_REQUEST="true", HTTP_HX_TARGET="table")
    assert targeted_view(other).template_name == "page.html"
    assert targeted_view(aimed).template_name == "partial.html"


@pytest.mark.parametrize("word, value", [("1", True), ("Yes", True), ("off", False), ("0", False)])
def test_boolean_words(monkeypatch, word, value):
    monkeypatch.setenv("ASSAY_X", word)
    assert env_bool("ASSAY_X", not value) is value


@pytest.mark.parametrize("word", ["ture", "enabled", "2"])
def test_unknown_boolean_word_is_an_error(monkeypatch, word):
    monkeypatch.setenv("ASSAY_X", word)
    with pytest.raises(ImproperlyConfigured, match="ASSAY_X"):
        env_bool("ASSAY_X", True)


def test_numbers_are_parsed_strictly(monkeypatch):
    monkeypatch.setenv("ASSAY_N", "12")
    assert env_int("ASSAY_N", 5) == 12
    monkeypatch.setenv("ASSAY_N", "12MB")
    with pytest.raises(ImproperlyConfigured, match="whole number"):
        env_int("ASSAY_N", 5)
    monkeypatch.setenv("ASSAY_N", "-1")
    with pytest.raises(ImproperlyConfigured, match="at least 0"):
        env_int("ASSAY_N", 5)


def test_csv_text_keeps_empty_cells_empty_and_formulas_as_text():
    from web.spreadsheets import csv_text

    text = csv_text(["a", "b", "c"], [["", "=1+1", 3]])
    assert text.splitlines() == ["a,b,c", ",'=1+1,3"]


def test_the_run_cache_follows_the_memory_and_a_containers_limit(tmp_path):
    machine = machine_memory_mb(limit_files=())
    assert machine and machine > 0
    unlimited, limited = tmp_path / "memory.max", tmp_path / "limit_in_bytes"
    unlimited.write_text("max\n")
    limited.write_text(f"{256 * 1024**2}\n")
    assert machine_memory_mb(limit_files=(unlimited,)) == machine  # no limit: the machine
    assert machine_memory_mb(limit_files=(unlimited, limited, tmp_path / "none")) == 256
    # A sixth, at least 512 MiB: 24 GiB gives the 4,096 the large project was measured with.
    assert [default_run_cache_mb(m) for m in (None, 256, 3072, 24 * 1024)] == [512, 512, 512, 4096]
