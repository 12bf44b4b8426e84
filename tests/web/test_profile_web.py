"""The People page shows a person's facts: what holds now, and what held before and until
when (GET …/profiles/{name}, issue 24)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.conftest import sign_in

pytestmark = pytest.mark.e2e

SPACE = "profiletest"


@pytest.fixture(scope="module")
def told(server):
    with server.http() as http:
        for session, day, text in (("s1", "01-05", "I live in Munich."),
                                   ("s2", "02-10", "We finally moved to Berlin! And I adopted "
                                                   "a cat named Miso."),
                                   ("s3", "03-01", "I started at Acme as a designer."),
                                   ("s4", "04-02", "I handed in my notice.")):
            put = http.put(f"/v1/spaces/{SPACE}/sessions/{session}/messages", json={
                "messages": [{"seq": 0, "role": "user", "speaker": "Mia", "content": text,
                              "at": f"2026-{day}T20:00:00+08:00"},
                             {"seq": 1, "role": "assistant", "speaker": "Aria",
                              "content": "That is lovely to hear.",
                              "at": f"2026-{day}T20:01:00+08:00"}]})
            assert put.status_code == 200, put.text
            assert http.post(f"/v1/spaces/{SPACE}/extract", json={}).status_code == 200


def test_the_people_page_shows_now_and_before(open_page, server, told):
    page, _ = open_page()
    sign_in(page, server, path=f"/#/{SPACE}/people/Mia")
    facts = page.locator(".facts")
    expect(facts).to_contain_text("Berlin")
    expect(facts).to_contain_text("Miso")
    now = facts.locator("ul").first
    expect(now).to_contain_text("Berlin")
    expect(now).not_to_contain_text("Munich")
    before = facts.locator("ul[data-status='people.was']")
    expect(before).to_contain_text("Munich")
    expect(before).to_contain_text("until 2026-02-10")


def test_a_role_whose_job_ended_is_shown_unconfirmed(open_page, server, told):
    """Issue 36: Mia quit Acme and told no new job: her role is neither now nor before, but
    in a group of its own, and Acme is before."""
    page, _ = open_page()
    sign_in(page, server, path=f"/#/{SPACE}/people/Mia")
    facts = page.locator(".facts")
    unsure = facts.locator("ul[data-status='people.unsure']")
    expect(unsure).to_contain_text("designer")
    expect(facts.locator("h3", has_text="Unconfirmed since the job ended")).to_be_visible()
    expect(facts.locator("ul[data-status='people.facts']")).not_to_contain_text("designer")
    expect(facts.locator("ul[data-status='people.was']")).to_contain_text("Acme")
