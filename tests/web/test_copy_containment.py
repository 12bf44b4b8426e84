"""The web app's one copy of stored text for a prompt — the recall lab's "Copy context" — puts
the server's rendered context on the clipboard, contained like every recall context
(chalicelib.usecases.recall.context): the app does not assemble prompt text from stored
fields itself. Hostile memories are saved over HTTP, recalled in the lab in every format, and
the clipboard must hold exactly the context the API answered, which parses back into its cards
with no invisible or bidi character, tag opener or forged block."""

from __future__ import annotations

import unicodedata

import pytest
from playwright.sync_api import expect

from chalicelib.usecases.recall.context import parse_context
from tests.unit.test_context_containment import PAYLOADS, markers
from tests.web.conftest import sign_in

pytestmark = pytest.mark.e2e

SPACE = "copytest"
# What goes over HTTP: a lone surrogate is refused there (400 invalid_unicode).
HOSTILE = [p for p in PAYLOADS.values() if not any("\ud800" <= ch <= "\udfff" for ch in p)]


@pytest.fixture(scope="module")
def hostile(server):
    with server.http() as http:
        for n, payload in enumerate(HOSTILE):
            saved = http.post(f"/v1/spaces/{SPACE}/events", json={
                "summary": f"pottery class {payload}"[:4000], "title": f"pottery {payload}"[:200],
                "tags": [f"t {payload}"[:100]], "importance": 5 + n % 5,
                "happened_at": f"2026-05-{1 + n % 28:02d}T12:00:00+08:00"})
            assert saved.status_code == 201, saved.text


def is_recall(response) -> bool:
    return response.request.method == "POST" and response.url.endswith(f"/{SPACE}/recall")


@pytest.mark.parametrize("fmt", ["blocks", "timeline", "compact"])
def test_copy_context_copies_the_contained_context(open_page, server, hostile, fmt):
    page, _ = open_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    sign_in(page, server, path=f"/#/{SPACE}/recall")
    page.get_by_label("Query").fill("pottery class")
    page.get_by_label("Max cards").fill("20")
    page.get_by_text("More options").click()
    page.get_by_label("Context format").select_option(fmt)
    with page.expect_response(is_recall) as answer:
        page.get_by_role("button", name="Recall", exact=True).click()
    context = answer.value.json()["context"]
    cards = parse_context(context, fmt)
    assert len(cards) >= 10
    page.get_by_role("button", name="Copy context").click()
    expect(page.get_by_text("Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == context
    assert markers(copied) == ((len(cards), len(cards)) if fmt == "blocks" else (0, 0))
    assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")
                   for ch in copied if ch not in "\n\t")
    folded = unicodedata.normalize("NFKC", copied)
    assert "<|" not in folded and "</" not in folded and "```" not in copied
