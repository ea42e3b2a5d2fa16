"""Real browser: the assignments form keeps errors in place and refreshes its summary;
the import form shows only the chosen kind's options."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotator.models import Assignment, Query
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_assign_errors_stay_in_the_form_and_the_summary_refreshes(page, live_server, personas):
    for i in range(1, 6):
        Query.objects.create(project=personas["project"], qid=str(i), text=f"q {i}")
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:assign", args=["acme"]))
    summary = page.locator("#assign-summary")
    assert "5 queries, 5 without anybody assigned." in summary.inner_text()
    page.fill("#id_qids", "1 nope 2")
    page.click("#assign-form button.primary")
    page.wait_for_selector("#assign-form .errorlist")
    assert "Unknown query ids: nope" in page.locator("#assign-form").inner_text()
    assert page.input_value("#id_qids").strip() == "1 nope 2"  # what was typed is kept
    assert page.locator("h1").inner_text() == "Assignments"  # still the whole page
    page.fill("#id_qids", "1 2")
    page.select_option("#id_mode", "each")
    page.click("#assign-form button.primary")
    page.wait_for_selector("#assign-form .save-status.ok")
    page.wait_for_selector("#assign-summary:has-text('5 queries, 3 without anybody assigned.')")
    assert Assignment.objects.filter(query__qid__in=["1", "2"]).exists()
    assert not Assignment.objects.filter(query__qid__in=["3", "4", "5"]).exists()


def test_import_form_shows_the_chosen_kinds_options(page, live_server, personas):
    log_in(page, live_server, "alice", PASSWORD)
    page.goto(live_server.url + reverse("annotator:import_upload", args=["acme"]))
    page.select_option("#id_kind", "queries")
    assert not page.locator("#id_annotator").is_visible()
    assert not page.locator("#id_run_name").is_visible()
    assert page.locator("#id_file").is_visible() and page.locator("#id_format").is_visible()
    assert page.locator("[data-kind-help][data-kinds=queries]").is_visible()
    assert not page.locator("[data-kind-help][data-kinds=labels]").is_visible()
    page.select_option("#id_kind", "labels")
    assert page.locator("#id_annotator").is_visible() and page.locator("#id_level").is_visible()
    assert not page.locator("#id_run_name").is_visible()
    page.select_option("#id_kind", "files")
    assert page.locator("#id_replace").is_visible() and not page.locator("#id_format").is_visible()
