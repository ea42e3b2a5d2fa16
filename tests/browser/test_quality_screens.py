"""Source quality in a real browser, in English and Chinese: an owner adds the offered
dimension and chooses a gain rule; the dashboard shows each run's shares per grade and the
agreement page κ/α per dimension; screenshots of each language."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from quality.dimensions import project_gain_rule
from quality.models import QualityDimension
from tests.conftest import PASSWORD
from tests.test_metrics_views import bench  # noqa: F401
from tests.test_quality_gain import grade_sources

from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"


@pytest.mark.parametrize("language", ["en-US", "zh-CN"])
def test_quality_settings_dashboard_and_agreement(browser, live_server, personas, bench, language):  # noqa: F811
    for index, doc in enumerate(bench["docs"]):
        doc.metadata = {"site": "abc"[index % 3]}
        doc.save(update_fields=["metadata"])
    context = browser.new_context(locale=language, viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server, personas["owner"].username, PASSWORD)
    folder = SHOTS / language.split("-")[0]
    folder.mkdir(parents=True, exist_ok=True)
    page.goto(live_server.url + reverse("quality:settings", args=["acme"]))
    page.click("#quality-dimension-form button[type=submit]")  # the offered default
    page.wait_for_selector("#quality-dimensions code")
    assert QualityDimension.objects.get().site_field == "site"
    page.fill("#quality-gain-form input[name=rule]", "weight:source_quality:0,1,2")
    page.click("#quality-gain-form button[type=submit]")
    page.wait_for_selector("#quality-gain-form .errorlist")
    assert project_gain_rule(personas["project"]).is_none
    page.fill("#quality-gain-form input[name=rule]", "weight:source_quality:0,1,2,3")
    page.click("#quality-gain-form button[type=submit]")
    page.wait_for_selector("#gain-rule-now")
    assert str(project_gain_rule(personas["project"])) == "weight:source_quality:0,1,2,3"
    page.screenshot(path=str(folder / "quality_settings.png"), full_page=True)
    grade_sources(bench, personas)
    page.goto(
        live_server.url + reverse("metrics:dashboard", args=["acme"]) + "?level=documents&k=3"
    )
    page.wait_for_selector("#quality-shares tr[data-run=docs]")
    page.locator("#quality-shares").screenshot(path=str(folder / "quality_shares.png"))
    page.goto(live_server.url + reverse("gold:agreement", args=["acme"]))
    page.wait_for_selector("#quality-agreement tr[data-dimension=source_quality]")
    page.locator("#quality-agreement-section").screenshot(
        path=str(folder / "quality_agreement.png")
    )
    context.close()
