"""Fixtures of the web tests: the server (`annals serve`), Debian's Chromium through Playwright,
and pages whose console is watched (any error fails the test that caused it).

Chromium or Playwright missing: the browser tests skip locally, and fail where .ci/run set
ANNALS_REQUIRE_BROWSER=1 (CI must never pass by skipping them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.web.harness import (
    ADMIN_KEY,
    ConsoleWatch,
    Server,
    browser_missing,
    launch,
    skip_unless,
)

DESKTOP = {"width": 1280, "height": 860}
PHONE = {"width": 390, "height": 844}


# Module scope, not session: Playwright's sync API keeps an asyncio loop running while it is
# started, so any later test on the same xdist worker that runs its own loop (anyio.run in
# tests/e2e/test_mcp.py) would fail with "Cannot run the event loop while another loop is
# running". Launching Chromium once per module costs about a second.
@pytest.fixture(scope="module")
def browser():
    skip_unless(browser_missing(), "the web tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("web") / "data")
    try:
        srv.wait_ready()
        yield srv
    finally:
        err = srv.stop()
        if "Traceback (most recent call last)" in err:
            print(f"server stderr:\n{err[-4000:]}")


@pytest.fixture
def open_page(browser) -> Iterator[Callable]:
    """open_page(locale=, viewport=, allow=[...], axe=False) → (page, watch). At the end every
    page's console must hold no error but those the test allowed."""
    opened: list[tuple[object, ConsoleWatch]] = []

    def make(locale: str = "en-US", viewport: dict | None = None, allow: tuple = (),
             axe: bool = False, storage: dict | None = None):
        context = browser.new_context(locale=locale, viewport=viewport or DESKTOP,
                                      accept_downloads=True)
        if axe:  # an init script bypasses the page's CSP; nothing is fetched
            from tests.web.test_a11y import AXE

            context.add_init_script(path=str(AXE))
        if storage:
            context.add_init_script(script="".join(
                f"window.{area}.setItem({key!r}, {value!r});"
                for area, items in storage.items() for key, value in items.items()))
        page = context.new_page()
        page.set_default_timeout(10_000)
        watch = ConsoleWatch(allow=list(allow)).attach(page)
        opened.append((context, watch))
        return page, watch

    yield make
    problems = [e for _, watch in opened for e in watch.unexpected()]
    for context, _ in opened:
        context.close()
    assert problems == [], "console errors:\n" + "\n".join(problems)


def sign_in(page, server: Server, key: str = ADMIN_KEY, path: str = "/") -> None:
    page.goto(server.url + path)
    page.locator("input[name=key]").fill(key)  # any language
    page.locator("form.signin button[type=submit]").click()
    page.locator("main h1").first.wait_for()
