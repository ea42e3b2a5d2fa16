"""The demo as a new user meets it: log in as a demo annotator, see both real projects."""

import pytest
from django.core.management import call_command

from demo.loading import DEMO_PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_demo_annotator_sees_cranfield_and_chinese_lecard(
    demo_for_transactional_test, page, live_server
):
    # The database holds the demo as ``manage.py demo`` built it (tests.demo_database).
    call_command("demo", verbosity=0)  # idempotent: a second run adds nothing
    log_in(page, live_server, "demo-annotator", DEMO_PASSWORD)
    projects = page.locator("#project-table").inner_text()
    assert "Cranfield" in projects and "LeCaRD" in projects
    assert "US Constitution (PDF)" in projects
    page.click("text=Cranfield (aeronautics)")
    assert page.locator("#n-queries").inner_text() == "225"
    assert page.locator("#n-documents").inner_text() == "1400"
    assert page.locator("#n-chunkings").inner_text() == "2"
    page.goto(f"{live_server.url}/")
    page.click("text=LeCaRD")
    assert page.locator("#n-queries").inner_text() == "25"
    assert page.locator("#n-documents").inner_text() == "834"
    page.click("nav.project-nav >> text=Documents")
    page.locator("#document-table a").first.click()
    text = page.locator("article.document-text").inner_text()
    assert "被告人" in text  # Chinese legal text, shown as characters
