"""The recall lab's query box and trace, in headless Chromium against `annals serve`: Enter (and
Ctrl/⌘+Enter) recalls, Shift+Enter adds a line; the trace comes in the UI's language (the lab
sends `trace_lang`), whatever the query's, while the context keeps the query's language."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from chalicelib.usecases.recall.context import PREAMBLE_ZH
from tests.web.conftest import sign_in
from tests.web.harness import SPACE, seed

pytestmark = pytest.mark.e2e

CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.fixture(scope="module")
def seeded(server):
    seed(server)


def is_recall(response) -> bool:
    return response.request.method == "POST" and response.url.endswith(f"/{SPACE}/recall")


def test_enter_recalls_and_shift_enter_adds_a_line(open_page, server, seeded):
    page, _ = open_page()
    sign_in(page, server, path=f"/#/{SPACE}/recall")
    query = page.get_by_label("Query")
    expect(query).to_have_accessible_description(re.compile("Shift\\+Enter adds a line"))
    sent: list[dict] = []
    page.on("request", lambda r: r.method == "POST" and r.url.endswith("/recall")
            and sent.append(r.post_data_json))

    # Shift+Enter: a new line and no recall; then Enter recalls what is in the box, and adds
    # nothing to it.
    query.fill("奶糖体检")
    query.press("Shift+Enter")
    query.press_sequentially("结果")
    expect(query).to_have_value("奶糖体检\n结果")
    with page.expect_response(is_recall) as answer:
        query.press("Enter")
    assert answer.value.ok
    expect(page.locator(".badge.verdict-hit")).to_be_visible()
    expect(query).to_have_value("奶糖体检\n结果")
    assert [body["query"] for body in sent] == ["奶糖体检\n结果"]  # Shift+Enter sent nothing

    # Ctrl+Enter and ⌘+Enter recall too, without touching the text.
    for keys in ("Control+Enter", "Meta+Enter"):
        query.fill("what did Sam book?")
        with page.expect_response(is_recall):
            query.press(keys)
        expect(query).to_have_value("what did Sam book?")
    assert [body["query"] for body in sent][1:] == ["what did Sam book?"] * 2


def trace_lines(page) -> list[str]:
    """The trace's lines as the API sent them (without the visually hidden kind before each)."""
    trace = page.locator("ol.trace li")
    expect(trace.first).to_be_visible()
    return trace.evaluate_all("els => els.map(e => e.lastChild.textContent)")


def test_the_trace_comes_in_the_ui_language(open_page, server, seeded):
    page, _ = open_page(locale="en-US")
    sign_in(page, server, path=f"/#/{SPACE}/recall")

    # A Chinese query in the English UI: the trace is English, the context stays Chinese.
    page.get_by_label("Query").fill("奶糖体检")
    with page.expect_response(is_recall) as answer:
        page.get_by_role("button", name="Recall", exact=True).click()
    assert answer.value.request.post_data_json["trace_lang"] == "en"
    expect(page.locator("ol.trace li").first).to_contain_text("[recall] query: 奶糖体检")
    expect(page.locator(".trace li.trace-gate")).to_contain_text("gate: relevance")
    lines = trace_lines(page)
    assert all(line.startswith("[recall]") for line in lines), lines
    assert not any(CJK.search(line.replace("奶糖体检", "")) for line in lines), lines
    expect(page.locator("pre.context")).to_contain_text(PREAMBLE_ZH)  # for the model

    # The Chinese UI: an English query is traced in Chinese.
    page.locator("#lang-select").select_option("zh")
    query = page.get_by_label("问题")
    query.fill("what did Sam book?")
    with page.expect_response(is_recall) as answer:
        query.press("Enter")
    assert answer.value.request.post_data_json["trace_lang"] == "zh"
    expect(page.locator("ol.trace li").first).to_contain_text("[记忆检索] 线索：what did Sam book?")
    lines = trace_lines(page)
    assert all(line.startswith("[记忆检索]") for line in lines), lines
