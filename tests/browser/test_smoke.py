import pytest

from annotator.models import Document
from tests.conftest import PASSWORD

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_member_logs_in_and_sees_the_project_with_chinese_text(page, live_server, corpus, personas):
    log_in(page, live_server, "anna", PASSWORD)
    assert page.locator("#project-table").inner_text().count("Acme search") == 1
    assert "Other project" not in page.content()
    page.click("text=Acme search")
    assert page.locator("#n-documents").inner_text() == "1"
    page.click("nav.project-nav >> text=Documents")
    page.click("text=d1")
    text = page.locator("article.document-text").inner_text()
    assert "第二页：机翼的升力。" in text
    # Markup in a document is shown as text, never run.
    assert "<script>alert(1)</script>" in text
    assert Document.objects.count() == 1


def test_htmx_is_served_by_the_app(page, live_server, personas):
    log_in(page, live_server, "anna", PASSWORD)
    assert page.evaluate("typeof window.htmx") == "object"
