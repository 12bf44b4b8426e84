"""The web app follows a background job: with a server that extracts at most 2 messages inside
a request, the import's "extract right after" and the "Extract events" button get a 202 with a
job, show its progress (messages done of the total, events so far) and end with the events it
made. Real `annals serve`, real headless Chromium; the screen stays accessible while it runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.server import server_env
from tests.web.conftest import sign_in
from tests.web.harness import ADMIN_KEY, CHAT, SPACE, Server, write_chat
from tests.web.test_a11y import axe_violations

pytestmark = pytest.mark.e2e


class JobServer(Server):
    def __init__(self, data_dir: Path):
        super(Server, self).__init__(data_dir, env=server_env(
            data_dir, ANNALS_EMBEDDER="hash", ANNALS_API_KEY=ADMIN_KEY,
            ANNALS_EXTRACT_SYNC_MAX_MESSAGES="2"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = JobServer(tmp_path_factory.mktemp("web-jobs") / "data")
    try:
        srv.wait_ready()
        yield srv
    finally:
        srv.stop()


def test_import_and_extract_follow_the_job_to_its_end(open_page, server, tmp_path):
    page, _ = open_page(axe=True)
    sign_in(page, server, path=f"/#/{SPACE}/ops")
    page.get_by_role("link", name="Operations").click()
    page.get_by_label("Chat file").set_input_files(str(write_chat(tmp_path)))
    page.get_by_label("Extract events right after the import").check()
    page.get_by_role("button", name="Import", exact=True).click()
    line = page.locator("#import-progress ~ p")
    # the job runs in the background worker at nice 10: a busy machine slows it, not the web
    expect(line).to_contain_text(re.compile(r"Imported 8 messages .* Extraction made \d+ events"),
                                 timeout=60_000)
    expect(page.locator("#import-progress")).to_have_js_property("max", 8)  # the job's total
    expect(page.locator("#import-progress")).to_have_js_property("value", 8)
    assert axe_violations(page) == []

    with server.http() as http:  # a second session: pending again, and over the limit
        messages = [{"seq": i, "role": m["role"], "content": m["content"], "at": m["timestamp"]}
                    for i, m in enumerate(CHAT)]
        assert http.put(f"/v1/spaces/{SPACE}/sessions/second/messages",
                        json={"messages": messages}).status_code == 200
    page.get_by_role("button", name="Extract events").click()
    expect(page.locator(".job-result")).to_contain_text(re.compile(r"Extraction made \d+ events"))
    expect(page.locator("#job-progress")).to_have_js_property("value", 8)
    with server.http() as http:
        jobs = http.get(f"/v1/spaces/{SPACE}/jobs").json()["jobs"]
    assert [j["status"] for j in jobs] == ["done", "done"]
    assert [j["params"] for j in jobs] == [{"session": None}, {"session": "first-chat"}]
