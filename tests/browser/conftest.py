"""Real-browser tests: Debian's Chromium driven by Playwright, against a live server."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from django.core.signals import request_finished, request_started

# Playwright's sync API runs an event loop in the test thread; the ORM calls made by
# fixtures in that thread are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM}: run bin/test, which installs it")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class _RequestsInFlight:
    """How many requests the live server is still answering. A page closed at a test's
    end may leave one behind (a status poll already sent); its queries then held locks
    while the test database was emptied, and the TRUNCATE deadlocked with it (CI,
    PostgreSQL, 2026-11-28), failing that test and the next one."""

    def __init__(self):
        self.count = 0
        self.idle = threading.Condition()
        request_started.connect(self.started, weak=False)
        request_finished.connect(self.finished, weak=False)

    # The live server answers in threads of its own; the test client, in the test's.
    def started(self, **kwargs) -> None:
        if threading.current_thread() is threading.main_thread():
            return
        with self.idle:
            self.count += 1

    def finished(self, **kwargs) -> None:
        if threading.current_thread() is threading.main_thread():
            return
        with self.idle:
            self.count -= 1
            self.idle.notify_all()

    def wait(self, timeout: float = 15) -> None:
        with self.idle:
            self.idle.wait_for(lambda: self.count <= 0, timeout=timeout)


_in_flight = _RequestsInFlight()


@pytest.fixture(autouse=True)
def server_answered_everything():
    """After each browser test (its pages closed first: they are set up later, so torn
    down earlier), wait until the live server has answered every request, before the
    database is emptied (the database fixtures are set up first, torn down last)."""
    yield
    _in_flight.wait()


FAILURES = Path(__file__).resolve().parents[2] / "build" / "browser-failures"

# What the page saw besides its requests, for the trail of a failed test: the keys that
# reached it (and where the focus was), the label-change events (from a save's answer or
# from another tab) and the requests htmx sent or dropped.
TRAIL_EVENTS = """
(() => {
  const say = (...parts) => console.debug("[trail]", ...parts);
  const where = () => {
    const el = document.activeElement;
    return el ? el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") : "none";
  };
  document.addEventListener("keydown", (e) => say("key", e.key, "focus", where()), true);
  for (const name of ["labels-changed", "htmx:sendAbort", "htmx:abort"]) {
    document.addEventListener(name, (e) => {
      const detail = e.detail || {};
      say(name, JSON.stringify({ ...detail, elt: undefined, target: undefined, xhr: undefined }));
    }, true);
  }
  document.addEventListener("htmx:beforeRequest", (e) => {
    const d = e.detail || {};
    const verb = d.requestConfig && d.requestConfig.verb;
    say("htmx request", verb, d.pathInfo && d.pathInfo.requestPath);
  }, true);
  const confirmed = (e) => say("htmx confirm", e.detail && e.detail.path);
  document.addEventListener("htmx:confirm", confirmed, true);
})();
"""


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test, so that the page fixture knows it failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def page(browser, request):
    """A fresh page; the test fails if the Content-Security-Policy blocked anything on it
    (an inline script, style or handler, or code htmx would have to evaluate).

    When the test fails, what the page last showed, its console and every request it made
    are written to ``build/browser-failures/`` and printed, so that a failure seen once
    (in CI, say) can be read afterwards."""
    context = browser.new_context(locale="en-US")
    context.add_init_script(script=TRAIL_EVENTS)
    page = context.new_page()
    page.set_default_timeout(15000)
    blocked: list[str] = []
    trail: list[str] = []
    page.on(
        "console",
        lambda message: (
            blocked.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.on("console", lambda message: trail.append(f"console {message.type}: {message.text}"))
    page.on("request", lambda r: trail.append(f"request {r.method} {r.url}"))
    page.on("response", lambda r: trail.append(f"response {r.status} {r.request.method} {r.url}"))
    page.on("requestfailed", lambda r: trail.append(f"failed {r.method} {r.url} {r.failure}"))
    page.on(
        "framenavigated",
        lambda f: trail.append(f"navigated {f.url}") if f == page.main_frame else None,
    )
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        _keep_failure(request.node.name, page, trail)
    context.close()
    assert blocked == [], blocked


def _keep_failure(name: str, page, trail: list[str]) -> None:
    """Write the failed test's screenshot and trail under build/browser-failures/."""
    FAILURES.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(FAILURES / f"{name}.png"), full_page=True)
        trail.append(f"last url {page.url}")
    except Exception as error:  # the page may be gone; the trail still helps
        trail.append(f"no screenshot: {error}")
    (FAILURES / f"{name}.txt").write_text("\n".join(trail) + "\n", encoding="utf-8")
    print(f"\n--- browser trail of {name} ---\n" + "\n".join(trail[-80:]))


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


class SwitchedRoute:
    """A route put on the page before it loads, whose answer a test switches later
    (``answer``: None lets requests through; else a function of the route, e.g. one
    that fulfils a 500 or aborts).

    Interception switched on mid-page (``page.route`` after the page loaded) lost the first
    request it caught in CI more than once: htmx sent the save, and neither the page's
    request event nor the route saw it within 15 s. Put on up front, the route is already
    in place; a test only changes what it answers."""

    def __init__(self, page, pattern: str):
        self.answer = None
        page.route(pattern, self._handle)

    def _handle(self, route) -> None:
        answer = self.answer
        if answer is None:
            route.continue_()
        else:
            answer(route)


def server_error(route) -> None:
    route.fulfill(status=500, body="")
