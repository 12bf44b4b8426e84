"""Two paper cuts of issue 36, in headless Chromium against `annals serve`: the graph's event
diamonds carry a short label (the title cut to a few characters or words, the full title on
hover and on focus), and on a phone (390×844) the chronicle's filters and the recall lab's
options fold behind a toggle, so the first screen shows events and the verdict."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import PHONE, sign_in
from tests.web.harness import SPACE, seed, seed_trip

pytestmark = pytest.mark.e2e

SHORT = 16  # characters a label may take, the ellipsis included
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def seeded(server):
    seed(server)  # Chinese and English titles
    seed_trip(server)  # a thread, places and the events between them


def above_the_tabs(page, locator) -> bool:
    """Whether the element lies whole in the first screen, above the phone's tab bar."""
    box = locator.bounding_box()
    tabs = page.locator("nav.tabs").bounding_box()
    return box is not None and box["y"] + box["height"] <= tabs["y"]


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_every_event_node_has_a_short_label_and_its_full_title_on_focus(open_page, server,
                                                                         seeded, locale):
    page, _ = open_page(locale=locale)
    sign_in(page, server, path=f"/#/{SPACE}/people")
    nodes = page.locator("svg.graph a.node.event")
    expect(nodes.first).to_be_attached()
    labels = page.locator("svg.graph g.labels text.event")
    expect(labels).to_have_count(nodes.count())
    titles = [nodes.nth(i).get_attribute("aria-label") for i in range(nodes.count())]
    shown = labels.all_text_contents()
    for title, label in zip(titles, shown, strict=True):
        assert 0 < len(label) <= SHORT, (title, label)
        assert label == title or (label.endswith("…")
                                  and title.startswith(label.removesuffix("…"))), (title, label)
    chinese = [label for label in shown if CJK.search(label)]
    assert chinese and all(len(label) <= 8 for label in chinese), chinese  # a few characters
    cut = next(i for i, title in enumerate(titles) if len(title) > SHORT)
    assert shown[cut].endswith("…")
    # the full title: as the node's tooltip, and in its label while it has the focus
    expect(nodes.nth(cut).locator("title")).to_have_text(titles[cut])
    nodes.nth(cut).focus()
    expect(labels.nth(cut)).to_have_text(titles[cut])
    nodes.nth(cut).blur()
    expect(labels.nth(cut)).to_have_text(shown[cut])
    nodes.nth(cut).hover()
    expect(labels.nth(cut)).to_have_text(titles[cut])


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_on_a_phone_the_chronicle_shows_events_first_and_its_filters_on_request(
        open_page, server, seeded, locale):
    page, _ = open_page(locale=locale, viewport=PHONE)
    sign_in(page, server, path=f"/#/{SPACE}/chronicle")
    first = page.locator(".timeline li.event").first
    expect(first).to_be_visible()
    assert above_the_tabs(page, first)
    form = page.locator("form.filters")
    toggle = form.locator("button[aria-expanded]")
    status = form.locator("select").last
    expect(form.locator("input[type=search]")).to_be_visible()  # searching stays at hand
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(status).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(status).to_be_visible()
    status.select_option("all")
    toggle.click()
    expect(status).to_be_hidden()
    expect(toggle).to_contain_text("1")  # folded, it still says a filter is on
    toggle.click()  # left open, the filters are open when the reader comes back
    page.get_by_role("navigation").get_by_role("link").nth(1).click()
    expect(page.locator("form.recall-form")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link").first.click()
    expect(page.locator("form.filters button[aria-expanded]")).to_have_attribute(
        "aria-expanded", "true")
    expect(status).to_have_value("all")


def test_on_a_desktop_every_filter_shows_and_no_toggle(open_page, server, seeded):
    page, _ = open_page()
    sign_in(page, server, path=f"/#/{SPACE}/chronicle")
    expect(page.locator(".timeline li.event").first).to_be_visible()
    expect(page.locator("form.filters select").last).to_be_visible()
    expect(page.locator("form.filters button[aria-expanded]")).to_be_hidden()
    page.goto(f"{server.url}/#/{SPACE}/recall")
    expect(page.locator("form.recall-form").get_by_label("Chat window")).to_be_visible()
    expect(page.locator("form.recall-form button[aria-expanded]")).to_be_hidden()


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_on_a_phone_the_recall_lab_shows_the_verdict_first_and_its_options_on_request(
        open_page, server, seeded, locale):
    page, _ = open_page(locale=locale, viewport=PHONE)
    sign_in(page, server, path=f"/#/{SPACE}/recall")
    form = page.locator("form.recall-form")
    window = form.locator("input[type=text]").nth(1)
    toggle = form.locator("button[aria-expanded]")
    expect(form.locator("textarea")).to_be_visible()
    expect(window).to_be_hidden()
    form.locator("textarea").fill("what did Sam book?")
    form.locator("textarea").press("Enter")
    verdict = page.locator(".verdict")
    expect(verdict.locator(".badge")).to_be_visible()
    assert above_the_tabs(page, verdict)
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(window).to_be_visible()
