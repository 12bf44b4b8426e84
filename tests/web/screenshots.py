"""`make screenshots`: every screen of the web app, desktop and phone, Chinese and English, as
PNG files in docs/screenshots/ (shown in README.md and docs/web.md).

A fresh `annals serve` (hash embedder) gets the small chat of the tests, extracted, one event
edited twice (so its history has something to show), the trip told over six sessions (so there
are threads, places, relations and summaries) and a scoped key (so the key table does);
Debian's Chromium, through Playwright, takes the pictures; it needs a CJK font
(apt-get install -y fonts-noto-cjk) and refuses to draw Chinese as boxes.

    python -m tests.web.screenshots [--out docs/screenshots] [--only chronicle,recall]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tests.web.harness import (
    ADMIN_KEY,
    SPACE,
    Server,
    browser_missing,
    cjk_font_problem,
    launch,
    seed,
    seed_trip,
    temp_dir,
)

VIEWPORTS = {"desktop": ({"width": 1280, "height": 800}, 1), "phone": ({"width": 390, "height": 844}, 2)}
LOCALES = {"en": "en-US", "zh": "zh-CN"}
MAX_HEIGHT = {"desktop": 1500, "phone": 1700}  # CSS pixels: enough to show the screen's point
SCREENS = ("signin", "chronicle", "event", "recall", "people", "thread", "ops")
QUERY = {"en": "what did Sam book?", "zh": "奶糖体检"}


def prepare(server: Server) -> tuple[str, str]:
    events = seed(server)
    trip = seed_trip(server)
    thread = next(t for t in trip["threads"] if t["title"] == "Kyoto")["id"]
    checkup = next(e for e in events if e["importance"] >= 7)
    with server.http() as http:
        path = f"/v1/spaces/{SPACE}/events/{checkup['id']}"
        http.patch(path, json={"version": 1, "importance": 8, "tags": ["health"],
                               "summary": checkup["summary"] + "，医生夸它很健康"})
        http.patch(path, json={"version": 2, "title": "奶糖的第一次体检", "location": "宠物医院"})
        http.post("/v1/keys", json={"spaces": [SPACE], "access": "write", "label": "tavern-bot"})
        http.post(f"/v1/spaces/{SPACE}/recall", json={"query": "奶糖体检", "window": "chat-1"})
    return checkup["id"], thread


def shoot(page, path: Path, device: str) -> None:
    height = min(page.evaluate("document.documentElement.scrollHeight"), MAX_HEIGHT[device])
    width = page.viewport_size["width"]
    page.screenshot(path=str(path), clip={"x": 0, "y": 0, "width": width, "height": height},
                    full_page=True, animations="disabled", caret="hide")


def screens(page, url: str, lang: str, event_id: str, thread_id: str) -> dict:
    def go(route: str, ready: str):
        def show():
            page.goto(f"{url}/#/{SPACE}/{route}")
            page.locator(ready).first.wait_for()
        return show

    def recall():
        page.goto(f"{url}/#/{SPACE}/recall")
        page.locator("textarea").fill(QUERY[lang])
        # a phone folds the options away: open them for the window, and fold them again
        toggle = page.locator("form.recall-form button.fold-toggle")
        folded = toggle.is_visible()
        if folded:
            toggle.click()
        page.locator("form.recall-form input[type=text]").nth(1).fill("chat-1")
        if folded:
            toggle.click()
        page.locator("form.recall-form button[type=submit]").click()
        page.locator(".verdict .badge").wait_for()

    return {
        "chronicle": go("chronicle", ".timeline li.event"),
        "event": go(f"event/{event_id}", ".history li"),
        "recall": recall,
        "people": go("people/小明", "svg.graph"),
        "thread": go(f"thread/{thread_id}", ".materials li.event"),
        "ops": go("ops", ".tiles"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--only", default=",".join(SCREENS))
    args = parser.parse_args(argv)
    missing = browser_missing()
    if missing:
        print(f"screenshots: {missing}", file=sys.stderr)
        return 1
    wanted = set(args.only.split(","))
    args.out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    server = Server(temp_dir() / "data")
    written = []
    try:
        server.wait_ready()
        event_id, thread_id = prepare(server)
        with sync_playwright() as playwright:
            browser = launch(playwright)
            page = browser.new_page(locale="zh-CN")
            page.goto(server.url + "/")
            page.locator("input[name=key]").wait_for()
            problem = cjk_font_problem(page)  # else every Chinese glyph would be a box
            page.close()
            if problem:
                print(f"screenshots: {problem}", file=sys.stderr)
                return 1
            for lang, locale in LOCALES.items():
                for device, (viewport, scale) in VIEWPORTS.items():
                    common = {"locale": locale, "viewport": viewport, "device_scale_factor": scale,
                              "timezone_id": "Asia/Shanghai", "color_scheme": "light"}
                    if "signin" in wanted:
                        context = browser.new_context(**common)
                        page = context.new_page()
                        page.goto(server.url + "/")
                        page.locator("input[name=key]").wait_for()
                        written.append(args.out / f"signin-{lang}-{device}.png")
                        shoot(page, written[-1], device)
                        context.close()
                    context = browser.new_context(**common)
                    context.add_init_script(script=(
                        f"try {{ sessionStorage.setItem('annals.key', {ADMIN_KEY!r}); }} catch (e) {{}}"))
                    page = context.new_page()
                    for name, show in screens(page, server.url, lang, event_id, thread_id).items():
                        if name not in wanted:
                            continue
                        show()
                        page.evaluate("document.activeElement && document.activeElement.blur()")
                        written.append(args.out / f"{name}-{lang}-{device}.png")
                        shoot(page, written[-1], device)
                    context.close()
            browser.close()
    finally:
        server.stop()
    total = sum(p.stat().st_size for p in written)
    print(f"screenshots: {len(written)} files, {total / 1024:.0f} KiB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
