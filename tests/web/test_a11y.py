"""Accessibility of every screen: axe-core (vendored in tests/web/vendor/, injected by the test;
nothing is fetched) finds no serious or critical violation, every control is reached with Tab,
and the focused control shows it (an outline)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.conftest import PHONE, sign_in
from tests.web.harness import SPACE, seed, seed_trip

pytestmark = pytest.mark.e2e

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
FOCUSABLE = ("a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), "
             "select:not([disabled]), textarea:not([disabled]), summary, "
             "[tabindex]:not([tabindex='-1'])")

MARK = """(selector) => {
  let n = 0;
  for (const el of document.querySelectorAll(selector)) {
    // a control inside a closed <details> is not shown, so not in the Tab order: its summary is
    if (el.tagName !== 'SUMMARY' && el.closest('details:not([open])')) continue;
    if (el.closest('[hidden], [inert]') || !el.checkVisibility({visibilityProperty: true})) continue;
    el.setAttribute('data-kb', String(n++));
  }
  return n;
}"""

ACTIVE = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  return {kb: el.getAttribute('data-kb'), tag: el.tagName, text: (el.textContent || el.value || '').slice(0, 40),
          outline: style.outlineStyle, width: parseFloat(style.outlineWidth)};
}"""


@pytest.fixture(scope="module")
def events(server):
    events = seed(server)
    seed_trip(server)  # threads, entities, relations and summaries to show
    return events


def screens(page, server, events) -> dict[str, callable]:
    """Each screen, made ready to be checked."""
    checkup = next(e for e in events if e["importance"] >= 7)
    with server.http() as http:
        threads = http.get(f"/v1/spaces/{SPACE}/threads").json()["threads"]
        kyoto = next(t for t in threads if t["title"] == "Kyoto")
        place = next(e for e in http.get(f"/v1/spaces/{SPACE}/entities?kind=place").json()["entities"]
                     if e["name"] == "Kyoto")
        booking = next(e for e in http.get(f"/v1/spaces/{SPACE}/threads/{kyoto['id']}").json()["materials"]
                       if e["status"] == "superseded")

    def summaries():
        page.goto(f"{server.url}/#/{SPACE}/chronicle")
        page.locator("details.summaries summary").click()
        page.locator("details.summaries li.event").first.wait_for()

    def graph_list():
        page.goto(f"{server.url}/#/{SPACE}/people/{place['id']}")
        page.locator("details.graph-list summary").click()
        page.locator("details.graph-list li").first.wait_for()

    def rename():
        page.goto(f"{server.url}/#/{SPACE}/thread/{kyoto['id']}")
        page.locator(".page-head button").click()
        page.locator("form.edit input").first.wait_for()

    def recall():
        page.goto(f"{server.url}/#/{SPACE}/recall")
        page.locator("textarea").fill("奶糖体检")
        page.locator("form.recall-form button[type=submit]").click()
        page.locator(".recall-card").first.wait_for()

    def go(path: str, ready: str):
        def run():
            page.goto(f"{server.url}/#/{SPACE}/{path}")
            page.locator(ready).first.wait_for()
        return run

    return {
        "chronicle": go("chronicle", ".timeline li.event"),
        "event": go(f"event/{checkup['id']}", ".messages .message"),
        "recall": recall,
        "people": go("people/小明", "svg.graph"),
        "chronicle-summaries": summaries,
        "chronicle-thread": go("chronicle", ".timeline li.event .chip.thread"),
        "event-relations": go(f"event/{booking['id']}", ".relations li"),
        "people-entity": graph_list,
        "thread": go(f"thread/{kyoto['id']}", ".materials li.event"),
        "thread-rename": rename,
        "ops": go("ops", ".tiles"),
    }


def axe_violations(page) -> list[str]:
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:5]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def tab_through(page) -> tuple[set[int], int, list[str]]:
    """Tab from the top until every marked control was focused (or twice round)."""
    total = page.evaluate(MARK, FOCUSABLE)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.evaluate("window.scrollTo(0, 0)")
    reached: set[int] = set()
    unseen: list[str] = []
    for _ in range(2 * total + 10):
        page.keyboard.press("Tab")
        active = page.evaluate(ACTIVE)
        if not active or active["kb"] is None:
            continue
        reached.add(int(active["kb"]))
        if active["outline"] == "none" or active["width"] < 2:
            unseen.append(f"{active['tag']} {active['text']!r}: outline {active['outline']}")
        if len(reached) == total:
            break
    return reached, total, unseen


@pytest.mark.parametrize(("locale", "viewport"), [("en-US", None), ("zh-CN", PHONE)],
                         ids=["en-desktop", "zh-phone"])
def test_every_screen_passes_axe_and_the_keyboard(open_page, server, events, locale, viewport):
    page, _ = open_page(locale=locale, viewport=viewport, axe=True)
    page.goto(server.url + "/")
    expect(page.locator("input[name=key]")).to_be_visible()
    assert axe_violations(page) == [], "sign-in"
    sign_in(page, server)
    failures = []
    for name, show in screens(page, server, events).items():
        show()
        failures += [f"{name}: {v}" for v in axe_violations(page)]
        reached, total, unseen = tab_through(page)
        if len(reached) != total:
            missing = page.evaluate(
                "(seen) => [...document.querySelectorAll('[data-kb]')].filter(el => !seen.includes(+el.dataset.kb))"
                ".map(el => el.tagName + ' ' + (el.textContent || el.getAttribute('aria-label') || '').slice(0, 30))",
                sorted(reached))
            failures.append(f"{name}: Tab reached {len(reached)} of {total}; not {missing[:8]}")
        failures += [f"{name}: focus not visible on {u}" for u in unseen[:5]]
    assert failures == [], "\n".join(failures)
