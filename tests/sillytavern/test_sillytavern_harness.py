"""The harness itself: a real SillyTavern 1.19.0, its Chat Completion API pointed at the
upstream double, a chat with Mika driven through Chromium. The extension's end-to-end test
builds on exactly this path, so it must hold on its own first.

Skips only when node, npm or Chromium/Playwright are missing, and never where
ANNALS_REQUIRE_BROWSER is set."""

from __future__ import annotations

import pytest

from tests.sillytavern.harness import (
    SillyTavern,
    UpstreamModel,
    chromium,
    open_chat,
    send,
)

pytestmark = pytest.mark.sillytavern

FIRST = "hello Mika, I moved to Hangzhou"
SECOND = "Any tea houses you would recommend?"


def reply(body: dict) -> str:
    """Mika's answer, told apart by the user's last words (so each turn is checkable)."""
    last = body["messages"][-1]["content"]
    return "Hangzhou is lovely in spring!" if "Hangzhou" in last else "Try one by West Lake."




def test_a_chat_with_mika_goes_through_the_upstream(available):
    with UpstreamModel(reply=reply) as upstream, SillyTavern(upstream.url) as st, \
            chromium() as browser:
        page = st.new_page(browser)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        open_chat(page)

        assert send(page, FIRST, expect="Hangzhou is lovely") == "Hangzhou is lovely in spring!"
        asked = upstream.wait_for(lambda body: any(
            m.get("role") == "user" and FIRST in str(m.get("content"))
            for m in body.get("messages", [])))
        assert asked["model"] == "annals-double" and not asked.get("stream")
        assert page.locator("#chat .mes").last.locator(".mes_text").inner_text() \
            == "Hangzhou is lovely in spring!"

        send(page, SECOND, expect="West Lake")
        assert page.locator('#chat .mes[is_user="true"]').count() == 2
        assert page.locator('#chat .mes[is_user="false"][is_system="false"]').count() == 2
        assert len(upstream.chat_requests()) == 2
        assert errors == [], f"page errors:\n{errors}\nserver log:\n{st.log()[-3000:]}"
