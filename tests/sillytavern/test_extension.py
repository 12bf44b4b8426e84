"""Issue 38: the Annals extension in a real SillyTavern 1.19, driven by Chromium, against a real
`annals serve` (CORS for SillyTavern's origin) and an upstream model double that records what
SillyTavern sends it. Installed with `annals sillytavern install`. One chat, as a user has it:

- sent and received messages land in Annals with their seqs and speakers; an edit updates
  the stored text, a delete removes it, a swipe stores the shown swipe;
- the upstream's request for the next reply holds the memory block (from a chat told
  earlier), and the injected ids are reported to …/deliveries once the reply came;
- with reading on, "Read now" runs a reading task through SillyTavern's own model (the
  upstream answers it) and the events it wrote are in Annals, `read_by: "host"`;
- Annals stopped mid-chat: the chat goes on, and what was said meanwhile reaches Annals when
  it is back; stored text in the panel is text, never HTML;
- screenshots of the panel in English and Chinese (ANNALS_SCREENSHOT_DIR, else the test's
  temporary folder)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.server import ANNALS, AnnalsServer, server_env
from tests.sillytavern.harness import (
    SillyTavern,
    UpstreamModel,
    chromium,
    dismiss_popups,
    open_chat,
    send,
)

pytestmark = pytest.mark.sillytavern

KEY = "ak_sillytavern_e2e_key_0123456789abcdef"
SPACE = "Mika"  # the character's name made a space id
SESSION = "Mika-annals"  # the chat file "Mika - annals.jsonl" made a session id
EARLIER = [("user", "小林", "我养的橘猫叫团子，今年四岁了"), ("assistant", "Mika", "团子好可爱！")]
HOSTILE = "<img src=x onerror=\"document.body.dataset.pwned=1\"><b>粗体</b>"
LINE = re.compile(r"^\[seq (\d+)\] (\S+)[^|]*\| (.+?) \((user|assistant)\): (.*)$", re.M)




class Mika:
    """The upstream's answers: a reading task (a JSON schema asked for) gets one event citing
    the batch's first user turn; a chat turn gets a numbered reply (each swipe differs)."""

    def __init__(self):
        self.turns = 0

    def __call__(self, body: dict) -> str:
        if body.get("response_format") or body.get("json_schema"):
            return reading_answer(body)
        self.turns += 1
        return f"Mika's reply number {self.turns}."


def reading_answer(body: dict) -> str:
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    turns = [m for m in LINE.finditer(text) if m.group(4) == "user"]
    if not turns:
        return json.dumps({"events": [], "facts": []})
    seq, stamp, speaker, _, said = turns[0].groups()
    event = {"title": f"{speaker}说的事", "summary": f"{speaker}：{said}"[:300],
             "when": stamp[:10], "importance": 6, "participants": [speaker],
             "sources": [int(seq)]}
    return json.dumps({"events": [event], "facts": []}, ensure_ascii=False)


def stored(annals: httpx.Client, session: str = SESSION) -> dict[int, dict]:
    answer = annals.get(f"/v1/spaces/{SPACE}/sessions/{session}/messages", params={"limit": 500})
    if answer.status_code == 404:
        return {}
    answer.raise_for_status()
    return {m["seq"]: m for m in answer.json()["messages"]}


def eventually(check, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result:
                return result
        except (AssertionError, httpx.TransportError):
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.3)


def install(st: SillyTavern, url: str) -> None:
    done = subprocess.run([str(ANNALS), "sillytavern", "install", "--st-dir", str(st.package),
                           "--data-root", str(st.data_root), "--url", url, "--key", KEY],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (st.extensions_dir / "annals" / "manifest.json").is_file()


def open_panel(page) -> None:
    """Extensions drawer open, Annals' section unfolded. On a loaded machine a click can land
    while SillyTavern's drawer is still sliding in and be lost: wait for the panel, and click
    the section's toggle again (at most three times) while its content stays hidden."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # optional: lazily

    panel = page.locator(".annals-panel")
    if not panel.is_visible():
        page.locator("#extensions-settings-button .drawer-toggle").click()
    panel.wait_for(state="visible")
    content = page.locator(".annals-panel .inline-drawer-content")
    for attempt in range(3):
        if content.is_visible():
            return
        page.locator(".annals-panel .inline-drawer-toggle").click()
        try:
            content.wait_for(state="visible", timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def seed_earlier_chat(annals: httpx.Client) -> None:
    msgs = [{"seq": i, "role": role, "speaker": who, "content": text,
             "at": f"2026-11-20T20:0{i}:00+08:00"} for i, (role, who, text) in enumerate(EARLIER)]
    annals.put(f"/v1/spaces/{SPACE}/sessions/earlier/messages",
               json={"messages": msgs}).raise_for_status()
    annals.post(f"/v1/spaces/{SPACE}/events", json={
        "title": HOSTILE, "summary": f"{HOSTILE} 一件旧事",
        "happened_at": "2026-11-19T12:00:00+08:00"}).raise_for_status()


def test_the_extension_keeps_the_chat_in_annals_and_brings_memory_back(available, tmp_path):
    shots = Path(os.environ.get("ANNALS_SCREENSHOT_DIR") or tmp_path)
    data = tmp_path / "annals"
    with UpstreamModel(reply=Mika()) as upstream:
        st = SillyTavern(upstream.url)
        env = server_env(data, ANNALS_API_KEY=KEY, ANNALS_EMBEDDER="hash",
                         ANNALS_CORS_ORIGINS=st.url)
        server = AnnalsServer(data, env=env)
        try:
            server.wait_ready()
            annals = server.http(KEY)
            seed_earlier_chat(annals)
            install(st, server.url)
            with st, chromium() as browser:
                page = st.new_page(browser)
                errors: list[str] = []
                page.on("pageerror", lambda error: errors.append(str(error)))
                console: list[str] = []
                page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
                posted: list[tuple[str, int]] = []
                page.on("response", lambda r: posted.append((r.url, r.status))
                        if r.url.startswith(server.url) and "/deliveries" in r.url else None)
                open_chat(page)
                try:
                    server = chat_through_annals(page, upstream, st, server, annals, env, data)
                except Exception as exc:  # the browser's console says why
                    raise AssertionError("\n".join(console[-60:])) from exc
                screenshots(page, shots)
                assert errors == [], f"page errors:\n{errors}\nserver log:\n{st.log()[-3000:]}"
        finally:
            server.stop()
    assert any(status == 201 for _, status in posted), posted


def chat_through_annals(page, upstream, st, server, annals, env, data) -> AnnalsServer:
    # capture: each message with its seq and speaker
    send(page, "周末我带团子去打疫苗", expect="reply number 1")
    held = eventually(lambda: (s := stored(annals)) and len(s) == 2 and s)
    assert [(m["role"], m["speaker"]) for m in held.values()] == [("user", "User"),
                                                                    ("assistant", "Mika")]
    assert held[0]["content"] == "周末我带团子去打疫苗"
    seqs = page.evaluate("() => SillyTavern.getContext().chat.map(m => m.extra.annals_seq)")
    assert seqs == [0, 1]

    # recall: the memory block of the earlier chat is in the upstream's next request
    send(page, "团子几岁了？", expect="reply number 2")
    asked = upstream.wait_for(lambda b: "团子几岁了" in json.dumps(b, ensure_ascii=False))
    prompt = json.dumps(asked["messages"], ensure_ascii=False)
    assert "今年四岁了" in prompt and "typed_memory" in prompt
    eventually(lambda: len(stored(annals)) == 4)

    # edit: the stored text follows (ST's own editor)
    first = page.locator('#chat .mes[mesid="0"]')
    first.hover()
    first.locator(".mes_edit").click()
    page.locator("#curEditTextarea").fill("周末我带团子去打狂犬疫苗")
    first.locator(".mes_edit_done").click()
    eventually(lambda: stored(annals)[0]["content"] == "周末我带团子去打狂犬疫苗")

    # swipe: the shown swipe is the message
    page.locator("#chat .mes.last_mes .swipe_right").click()
    page.locator("#chat .mes.last_mes .mes_text", has_text="reply number 3").wait_for()
    page.wait_for_function("() => !document.body.dataset.swiping")  # ST's swipe is over
    eventually(lambda: stored(annals)[3]["content"] == "Mika's reply number 3.")

    # delete (ST's own deleteMessage, as its menu calls it): gone from Annals, seqs unmoved
    page.evaluate("() => SillyTavern.getContext().deleteMessage(1)")
    eventually(lambda: sorted(stored(annals)) == [0, 2, 3])

    # reading with the chat's model: "Read now" with reading on
    open_panel(page)
    page.locator('.annals-panel [data-annals="reading"]').check()
    page.locator(".annals-panel .annals-button", has_text="Read now").click()
    upstream.wait_for(lambda b: bool(b.get("response_format") or b.get("json_schema")))
    page.locator("#toast-container", has_text="events: ").first.wait_for()  # reading done
    events = eventually(lambda: [e for e in annals.get(f"/v1/spaces/{SPACE}/events").json()
                                 ["events"] if e.get("read_by") == "host"])
    assert events[0]["sources"]

    # Annals stopped mid-chat: the chat goes on; what was said reaches Annals when it is back
    server.stop()
    send(page, "我下周搬去杭州", expect="reply number")
    page.locator("#toast-container", has_text="Annals").first.wait_for()
    server = AnnalsServer(data, env=env, port=server.port)
    server.wait_ready()
    open_panel(page)
    page.locator(".annals-panel .annals-button", has_text="Refresh").click()
    eventually(lambda: any(m["content"] == "我下周搬去杭州" for m in stored(annals).values()),
               timeout=40)

    # the panel shows stored text as text
    chronicle = page.locator(".annals-panel .annals-chronicle")
    chronicle.locator("strong", has_text="<b>粗体</b>").first.wait_for()
    assert chronicle.locator("img, b").count() == 0
    assert page.evaluate("() => document.body.dataset.pwned") is None
    return server


def screenshots(page, shots: Path) -> None:
    shots.mkdir(parents=True, exist_ok=True)
    open_panel(page)
    page.locator(".annals-panel").screenshot(path=str(shots / "sillytavern-panel-en.png"))
    page.locator(".annals-panel .annals-tab[data-view='recall']").click()
    page.locator(".annals-panel").screenshot(path=str(shots / "sillytavern-recall-en.png"))
    page.evaluate("() => localStorage.setItem('language', 'zh-cn')")
    open_chat(page)
    dismiss_popups(page)
    open_panel(page)
    page.locator(".annals-panel b", has_text="Annals 记忆").wait_for()
    page.locator(".annals-panel").screenshot(path=str(shots / "sillytavern-panel-zh.png"))
