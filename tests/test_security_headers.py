"""Content-Security-Policy ``default-src 'self'`` on every page, and pages that obey it.

The policy forbids inline scripts, inline styles and event-handler attributes, so every
page is checked for them too: one of those would be blocked by the browser and break."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.test_project_views import project_urls
from tests.test_project_views import site_objects as site_objects  # the fixture

pytestmark = pytest.mark.django_db

# A JSON data block (<script type="application/json">, the messages scripts show) is data
# the browser never runs, so the policy does not apply to it; any other inline script is code.
INLINE_SCRIPT = re.compile(
    r'<script(?![^>]*\bsrc=)(?![^>]*\btype="application/json")[^>]*>', re.IGNORECASE
)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle=", re.IGNORECASE)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.IGNORECASE)
HANDLER = re.compile(r"<[^>]*\son[a-z]+=", re.IGNORECASE)
EVALUATED = re.compile(r'hx-trigger="[^"]*\[|hx-on|hx-vals="js:|="javascript:', re.IGNORECASE)


def inline_code(html: str) -> list[str]:
    return [
        name
        for name, pattern in (
            ("inline script", INLINE_SCRIPT),
            ("style attribute", STYLE_ATTRIBUTE),
            ("style element", STYLE_ELEMENT),
            ("event handler attribute", HANDLER),
            ("code htmx would evaluate", EVALUATED),
        )
        if pattern.search(html)
    ]


def every_page(objects) -> list[str]:
    urls = [url for _, url in project_urls(objects)]
    return [
        *urls,
        reverse("annotator:project_list"),
        reverse("api:tokens"),
        reverse("password_change"),
    ]


def test_every_page_sends_the_policy_and_holds_no_inline_code(login, personas, site_objects):
    client = login(personas["owner"])
    checked = 0
    for url in every_page(site_objects):
        response = client.get(url)
        assert response["Content-Security-Policy"].startswith("default-src 'self'"), url
        if response.status_code == 200 and "html" in response.get("Content-Type", ""):
            assert inline_code(response.content.decode()) == [], url
            checked += 1
    assert checked > 25


def test_anonymous_pages_send_the_policy_and_hold_no_inline_code(client):
    for url in (reverse("login"), reverse("password_reset"), "/admin/login/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Security-Policy"].startswith("default-src 'self'"), url
        assert inline_code(response.content.decode()) == [], url


def test_a_json_data_block_is_not_inline_code_but_a_script_is():
    assert inline_code('<script id="m" type="application/json">{"a": 1}</script>') == []
    assert inline_code("<script>alert(1)</script>") == ["inline script"]
    assert inline_code('<script type="module">x()</script>') == ["inline script"]
