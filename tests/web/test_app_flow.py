"""The web app end to end, as a person uses it: sign in, import a chat, extract, find an event on
the timeline, open its evidence, edit it and read the history (and meet a 409), recall and read
the trace, report a delivery and see the next recall cool it down; a trip told over several
sessions becomes a thread that can be filtered, read, renamed (and meet a 409) and merged, with
its events' relations and the graph; a read-only key sees no write controls. Real `annals serve`,
real headless Chromium."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import PHONE, sign_in
from tests.web.harness import ADMIN_KEY, SPACE, seed, seed_trip, write_chat

pytestmark = pytest.mark.e2e

CHECKUP = "奶糖进行了体检"  # the title: no date and no relative time (the date is the when)


def test_sign_in_import_extract_edit_recall_and_cooldown(open_page, server, tmp_path):
    # A wrong key is refused (the 401 is the test's doing), then the admin key signs in.
    page, _ = open_page(allow=["status of 401", "status of 409"])
    page.goto(server.url + "/")
    page.get_by_label("API key").fill("not-a-key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("This key was not accepted")
    page.get_by_label("API key").fill(ADMIN_KEY)
    page.get_by_role("button", name="Sign in").click()

    # No space yet: name one, and land on its (empty) chronicle.
    expect(page.get_by_role("heading", name="Choose a space")).to_be_visible()
    page.get_by_label("Space id").fill(SPACE)
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_text("No events yet.")).to_be_visible()

    # Import a chat file with progress, then extract.
    page.get_by_role("link", name="Operations").click()
    page.get_by_label("Chat file").set_input_files(str(write_chat(tmp_path)))
    expect(page.get_by_label("Session")).to_have_value("first-chat")
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_text(re.compile(r"Imported 8 messages into “first-chat”"))).to_be_visible()
    expect(page.locator("#import-progress")).to_have_js_property("value", 8)
    page.get_by_role("button", name="Extract events").click()
    expect(page.locator(".job-result")).to_contain_text(re.compile(r"Extraction made [1-9]\d* events"))

    # The timeline: search, a key event highlighted, its page with evidence.
    page.get_by_role("link", name="Chronicle").click()
    page.get_by_label("Search").fill("体检")
    item = page.locator(".timeline li.event")
    expect(item).to_have_count(1)
    expect(item).to_have_class(re.compile(r"\bkey\b"))
    expect(page.get_by_role("heading", name=re.compile(r"June 2026"))).to_be_visible()
    item.get_by_role("link", name=CHECKUP).click()
    evidence = page.locator(".messages .message")
    expect(evidence).to_have_count(1)
    expect(evidence).to_contain_text("奶糖昨天进行了体检，结果一切正常")
    expect(evidence).to_contain_text("小明")

    # Edit: the history shows version 2 as a diff of what changed.
    page.get_by_role("button", name="Edit").click()
    page.get_by_role("textbox", name="Summary").fill("奶糖昨天（2026-06-14）进行了体检，结果一切正常，医生夸它很健康")
    page.get_by_label("Importance").fill("8")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved as version 2")
    history = page.locator(".history")
    expect(history.locator("li").first).to_contain_text("Version 2")
    expect(history.locator("li").first.locator("ins").first).to_contain_text("医生夸它很健康")
    expect(history.locator("li").first).to_contain_text("7 → 8")

    # Someone else edits meanwhile: the save answers 409, shown with a way through.
    event_id = page.url.rsplit("/", 1)[-1]
    with server.http() as http:
        other = http.patch(f"/v1/spaces/{SPACE}/events/{event_id}",
                           json={"version": 2, "tags": ["vet"]})
        assert other.status_code == 200 and other.json()["version"] == 3
    page.get_by_role("button", name="Edit").click()
    page.get_by_role("textbox", name="Title").fill("奶糖的体检")
    page.get_by_role("button", name="Save").click()
    conflict = page.locator(".notice.warn")
    expect(conflict).to_contain_text("Someone changed this event meanwhile")
    expect(conflict).to_contain_text("You edited version 2")
    page.get_by_role("button", name="Save mine over it").click()
    expect(page.get_by_role("status")).to_contain_text("Saved as version 4")
    expect(page.get_by_role("heading", level=1)).to_contain_text("奶糖的体检")
    expect(history.locator("li").nth(1)).to_contain_text("vet")  # version 3, their tag

    # Archive and restore.
    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_role("status")).to_contain_text("Archived")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("status")).to_contain_text("Restored")

    # Recall: verdict, cards with score parts, the gate in the trace, the context.
    page.get_by_role("link", name="Recall lab").click()
    page.get_by_label("Query").fill("奶糖体检")
    page.get_by_label("Chat window").fill("chat-1")
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator(".badge.verdict-hit")).to_be_visible()
    cards = page.locator(".recall-card")
    expect(cards.first).to_contain_text("奶糖的体检")
    expect(cards.first.locator("table.parts")).to_contain_text("relevance")
    expect(page.locator(".trace li.trace-gate")).to_contain_text("gate: relevance")  # the UI's language
    expect(page.locator("pre.context")).to_contain_text(f"ref=event:{event_id}")
    expect(page.get_by_text(re.compile(r"≈ \d+ tokens"))).to_be_visible()
    recalled = cards.count()

    # Report it as delivered: the next recall in the window cools it down.
    page.get_by_role("button", name=re.compile(r"Report \d+ as delivered")).click()
    expect(page.get_by_text(re.compile(rf"Reported {recalled} as delivered to window “chat-1”"))).to_be_visible()
    page.get_by_role("button", name="Recall again").click()
    cooled = page.locator(".trace li.trace-cooldown")
    expect(cooled).to_contain_text("[cooldown] window chat-1")
    expect(page.locator("section[aria-labelledby=cool-h]")).to_contain_text(f"event:{event_id}")
    expect(page.locator(".recall-card")).to_have_count(0)

    # Export the chronicle as Markdown (a download made in the page).
    page.get_by_role("link", name="Operations").click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download Markdown").click()
    with open(download.value.path(), encoding="utf-8") as fh:
        text = fh.read()
    assert "2026-06" in text and "医生夸它很健康" in text


def test_people_graph_language_and_phone(open_page, server):
    seed(server, "family")
    page, _ = open_page(locale="zh-CN", viewport=PHONE)
    sign_in(page, server, path="/#/family/people")
    expect(page.get_by_role("heading", name="人物", level=1)).to_be_visible()
    page.get_by_role("link", name=re.compile(r"^小明")).first.click()
    expect(page.locator("#person-h")).to_contain_text("小明")
    # 小明 and Sam; the assistant's messages name no one ("assistant"): nobody to list
    expect(page.locator("svg.graph a.node.person")).to_have_count(2)
    expect(page.get_by_role("link", name=re.compile(r"^assistant", re.I))).to_have_count(0)
    # Chinese by the browser's language, English on request (kept for the next visit).
    page.get_by_label("语言").select_option("en")
    expect(page.get_by_role("heading", name="People", level=1)).to_be_visible()
    assert page.evaluate("localStorage.getItem('annals.lang')") == "en"
    assert page.evaluate("document.documentElement.lang") == "en"
    # A phone screen: nothing wider than the viewport.
    with server.http() as http:
        thread = http.get("/v1/spaces/family/threads").json()["threads"][0]["id"]
    for view in ("chronicle", "recall", "people", "ops", f"thread/{thread}"):
        page.goto(f"{server.url}/#/family/{view}")
        page.locator("main h1").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], view


def test_a_read_key_sees_no_write_controls(open_page, server):
    events = seed(server, "shared")
    with server.http() as http:
        key = http.post("/v1/keys", json={"spaces": ["shared"], "access": "read"}).json()["key"]
    page, _ = open_page()  # and no 403 in the console: the page never tries
    sign_in(page, server, key)
    expect(page.get_by_role("heading", name="Chronicle")).to_be_visible()  # its only space
    expect(page.get_by_text("read only")).to_be_visible()
    page.goto(f"{server.url}/#/shared/event/{events[0]['id']}")
    expect(page.locator(".messages .message")).to_have_count(1)
    for name in ("Edit", "Archive", "Restore"):
        expect(page.get_by_role("button", name=name)).to_have_count(0)
    page.goto(f"{server.url}/#/shared/ops")
    expect(page.get_by_text("This key can only read")).to_be_visible()
    for name in ("Import", "Extract events", "Create key"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Download JSON")).to_be_visible()
    page.goto(f"{server.url}/#/shared/recall")
    page.get_by_label("Query").fill("奶糖体检")
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator(".badge.verdict-hit")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("as delivered"))).to_have_count(0)
    # Another space is not offered, and asking for it says so.
    page.goto(f"{server.url}/#/{SPACE}/chronicle")
    expect(page.get_by_role("alert")).to_contain_text("may not open space")
    assert json.loads(page.evaluate("JSON.stringify(sessionStorage)"))["annals.key"] == key


def test_a_trip_becomes_a_thread_to_read_rename_merge_and_see_in_the_graph(open_page, server):
    trip = seed_trip(server, "travel")
    [kyoto] = [t for t in trip["threads"] if t["title"] == "Kyoto"]
    with server.http() as http:
        detail = http.get(f"/v1/spaces/travel/threads/{kyoto['id']}").json()
    materials = detail["materials"]
    assert len(materials) >= 6
    booking = next(e for e in materials if e["status"] == "superseded")
    page, _ = open_page(allow=["status of 409"])
    sign_in(page, server, path="/#/travel/people")

    # People and threads: the places by kind, the thread with its events, the graph's thread node.
    expect(page.get_by_role("heading", name="People and threads", level=1)).to_be_visible()
    expect(page.locator(".kind-head", has_text="Places")).to_be_visible()
    threads = page.locator("section[aria-labelledby=threads-h]")
    expect(threads.get_by_role("link", name="⟲ Kyoto")).to_be_visible()
    expect(page.locator("svg.graph a.node.thread")).to_have_count(len(trip["threads"]))
    expect(page.locator("svg.graph a.node.entity.k-place").first).to_be_attached()
    expect(page.locator(".legend")).to_contain_text("thread")
    page.get_by_text("The graph as a list").click()
    expect(page.locator("details.graph-list")).to_contain_text("Kyoto")
    page.locator("section[aria-labelledby=people-h] a.person-link").filter(
        has=page.locator(".name", has_text=re.compile(r"^Kyoto$"))).click()  # the place, with its events
    expect(page.locator("#person-h")).to_contain_text("place")
    expect(page.locator("#person-h ~ ol li.event")).to_have_count(7)
    expect(page.locator("svg.graph a.node.selected")).to_have_count(1)

    # The thread's page: its materials, oldest first.
    page.goto(f"{server.url}/#/travel/thread/{kyoto['id']}")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Kyoto")
    items = page.locator(".materials li.event")
    expect(items).to_have_count(len(materials))
    expect(items.first).to_contain_text(materials[0]["title"])
    expect(items.last).to_contain_text(materials[-1]["title"])

    # Rename it (and give it an alias) with the version read.
    page.get_by_role("button", name="Rename").click()
    page.get_by_label("Title").fill("Kyoto in May")
    page.get_by_label("Also called").fill("Kansai trip")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Thread saved as version")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Kyoto in May")
    expect(page.locator(".page-head .chip")).to_have_text(["Kansai trip"])

    # Someone else renames it meanwhile: the save is refused with a clear message, the text
    # typed stays, and saving again on the latest version works.
    page.get_by_role("button", name="Rename").click()
    with server.http() as http:
        now = http.get(f"/v1/spaces/travel/threads/{kyoto['id']}").json()
        assert http.patch(f"/v1/spaces/travel/threads/{kyoto['id']}",
                          json={"version": now["version"], "title": "Their Kyoto"}).status_code == 200
    page.get_by_label("Title").fill("Our Kyoto trip")
    page.get_by_role("button", name="Save").click()
    conflict = page.locator(".notice.warn")
    expect(conflict).to_contain_text("Someone changed this thread meanwhile")
    expect(conflict).to_contain_text(f"You edited version {now['version']}")
    page.get_by_role("button", name="Load the latest version").click()
    expect(page.get_by_label("Title")).to_have_value("Our Kyoto trip")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Our Kyoto trip")

    # The chronicle filtered by the thread: its active events only, summaries kept apart.
    # The trip's sessions tell one or two events each: too few for a summary
    # (ANNALS_SUMMARY_MIN_EVENTS); a session of three has one (three people: three tellings).
    with server.http() as http:
        life = [("Mel", "I started learning the cello with a teacher downtown."),
                ("Sam", "My sister Jo is getting married in Lisbon in September."),
                ("Ann", "I adopted a ginger cat named Biscuit from the shelter.")]
        put = http.put("/v1/spaces/travel/sessions/life-1/messages", json={"messages": [
            {"seq": i, "role": "user", "speaker": who, "content": text,
             "at": f"2026-06-10T20:0{i}:00+08:00"} for i, (who, text) in enumerate(life)]})
        assert put.status_code == 200, put.text
        assert http.post("/v1/spaces/travel/extract", json={"session": "life-1"}).status_code == 200
        assert http.get("/v1/spaces/travel/events", params={"kind": "summary"}).json()["events"]
    page.goto(f"{server.url}/#/travel/chronicle")
    expect(page.locator("details.summaries summary")).to_contain_text("summar")
    expect(page.locator(".timeline li.summary-event")).to_have_count(0)
    page.get_by_label("Thread").select_option(kyoto["id"])
    expect(page.locator(".timeline li.event")).to_have_count(
        sum(e["status"] == "active" for e in materials))
    expect(page.locator(".scope-note")).to_contain_text("Our Kyoto trip")

    # The superseded booking says what replaced it; the change says what it replaces.
    page.goto(f"{server.url}/#/travel/event/{booking['id']}")
    expect(page.locator(".notice.replaced")).to_contain_text("A later event replaced this one")
    related = page.locator("section[aria-labelledby=related-h]")
    expect(related.get_by_role("link", name="⟲ Our Kyoto trip")).to_be_visible()
    related.locator("li.rel-updates a").click()
    expect(page.locator("li.rel-updates")).to_contain_text("Replaces")
    expect(page.locator("li.rel-updates")).to_contain_text(booking["title"])

    # Recall: a card of the trip shows its thread and materials.
    page.goto(f"{server.url}/#/travel/recall")
    page.get_by_label("Query").fill("Kyoto hotel")
    page.get_by_role("button", name="Recall", exact=True).click()
    expect(page.locator(".recall-card .card-thread").first).to_contain_text("Our Kyoto trip")
    expect(page.locator(".recall-card .thread-materials li").first).to_be_visible()

    # Merge another thread into it: its title becomes an alias, its page is gone.
    with server.http() as http:
        other = http.post("/v1/spaces/travel/threads", json={"title": "Hotels"})
        assert other.status_code == 201, other.text
        other = other.json()
    page.goto(f"{server.url}/#/travel/thread/{other['id']}")
    page.get_by_label("Into", exact=True).select_option(kyoto["id"])
    page.get_by_role("button", name="Merge").click()
    expect(page.get_by_role("status")).to_contain_text("“Hotels” merged into “Our Kyoto trip”")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Our Kyoto trip")
    expect(page.locator(".page-head .chips")).to_contain_text("Hotels")
