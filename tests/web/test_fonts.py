"""Chinese renders as Chinese: the app's fonts (body and monospace, as the page's CSS sets them)
draw real glyphs for Chinese characters in Debian's Chromium, not the .notdef box they all get
when no CJK font is installed (`make screenshots` would draw boxes too). Fails, never skips,
when the font is missing: apt-get install -y fonts-noto-cjk (.ci/run does)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.harness import cjk_font_problem

pytestmark = pytest.mark.e2e


def test_chinese_text_renders_with_a_cjk_font_not_boxes(open_page, server):
    page, _ = open_page(locale="zh-CN")
    page.goto(server.url + "/")
    expect(page.locator("main h1")).to_contain_text("登录")  # the page is in Chinese
    problem = cjk_font_problem(page)
    assert problem is None, problem
