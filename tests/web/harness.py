"""What the web tests and `make screenshots` share: `annals serve` as a subprocess (hash
embedder, no scheduler, a known admin key), Debian's Chromium driven by Playwright for Python
(never Playwright's own browser download), a small chat to import, and a watch on the page's
console."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.e2e.server import AnnalsServer, server_env

ADMIN_KEY = "web-admin-key-0123456789"
SPACE = "me"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
# As the machine's notes say: headless, no sandbox (root), and no background networking, so
# Chromium never tries to reach the internet (nothing may load from there anyway).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
REQUIRE_ENV = "ANNALS_REQUIRE_BROWSER"  # set by .ci/run: a missing browser fails, never skips

# A small chat, OpenAI-style, with times: two people, a key event, a trip.
CHAT = [
    {"role": "user", "name": "小明", "content": "我今天领养了一只橘猫，取名叫奶糖",
     "timestamp": "2026-06-01T20:00:00+08:00"},
    {"role": "assistant", "content": "太好了！奶糖一定很可爱。", "timestamp": "2026-06-01T20:00:05+08:00"},
    {"role": "user", "name": "小明", "content": "奶糖昨天进行了体检，结果一切正常",
     "timestamp": "2026-06-15T10:00:00+08:00"},
    {"role": "assistant", "content": "真让人放心。", "timestamp": "2026-06-15T10:00:05+08:00"},
    {"role": "user", "name": "Sam", "content": "I started learning the cello with a teacher downtown",
     "timestamp": "2026-06-18T09:00:00+08:00"},
    {"role": "assistant", "content": "That sounds wonderful.", "timestamp": "2026-06-18T09:00:05+08:00"},
    {"role": "user", "name": "Sam",
     "content": "I finally booked the flight to Lisbon for my sister's wedding",
     "timestamp": "2026-07-02T09:00:00+08:00"},
    {"role": "assistant", "content": "Congratulations to your sister!",
     "timestamp": "2026-07-02T09:00:05+08:00"},
]


def chromium_path() -> str | None:
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def browser_missing() -> str | None:
    """Why the web tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[dev]')"
    if chromium_path() is None:
        return "Chromium is not installed (apt-get install -y chromium)"
    return None


def skip_unless(missing: str | None, what: str) -> None:
    """Skip `what` when something it needs is `missing`; fail instead where REQUIRE_ENV is set
    (CI: these tests must run, never skip)."""
    if missing is None:
        return
    import pytest

    if os.environ.get(REQUIRE_ENV):
        pytest.fail(f"{missing}; {REQUIRE_ENV} is set, so {what} may not skip")
    pytest.skip(missing)


class Server(AnnalsServer):
    """`annals serve` on a free port and a fresh data dir (hash embedder, the admin key)."""

    def __init__(self, data_dir: Path):
        super().__init__(data_dir, env=server_env(data_dir, ANNALS_EMBEDDER="hash",
                                                  ANNALS_API_KEY=ADMIN_KEY))

    def http(self, key: str = ADMIN_KEY) -> httpx.Client:
        return super().http(key)


def write_chat(folder: Path, name: str = "first-chat.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(CHAT, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def seed(server: Server, space: str = SPACE) -> list[dict]:
    """The chat imported and extracted over HTTP (for tests and screenshots that start there)."""
    messages = [{"seq": i, "role": m["role"], "content": m["content"], "at": m["timestamp"],
                 **({"speaker": m["name"]} if "name" in m else {})} for i, m in enumerate(CHAT)]
    with server.http() as http:
        put = http.put(f"/v1/spaces/{space}/sessions/first-chat/messages",
                       json={"messages": messages})
        assert put.status_code == 200, put.text
        extracted = http.post(f"/v1/spaces/{space}/extract", json={})
        assert extracted.status_code == 200, extracted.text
        return extracted.json()["events"]


def launch(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                      headless=True)


@dataclass
class ConsoleWatch:
    """Console errors and uncaught exceptions of a page. `allow` lists substrings of expected
    messages (a 409 the test provoked on purpose shows as "Failed to load resource … 409")."""

    errors: list[str] = field(default_factory=list)
    allow: list[str] = field(default_factory=list)

    def attach(self, page) -> ConsoleWatch:
        page.on("console", lambda msg: msg.type in ("error", "assert") and self.errors.append(
            f"console.{msg.type}: {msg.text} @ {msg.location.get('url', '')}"))
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        page.on("requestfailed", lambda req: self.errors.append(
            f"requestfailed: {req.url} {req.failure}"))
        return self

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(a in e for a in self.allow)]


def temp_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="annals-web-"))


# A trip told over several sessions (after tests/api/test_story_thread.py): planned, booked,
# changed, taken and remembered. Extraction makes one thread of it; the merge pass lets the
# changed hotel replace the booking (an `updates` relation).
TRIP = [
    ("trip-1", "2026-03-01T20:00:00+08:00", [
        "Sam and I are planning a trip to Kyoto in May.",
        "My cat Luna had her vet checkup today."]),
    ("trip-2", "2026-03-10T20:00:00+08:00", [
        "I booked the Hotel Okura Kyoto for our Kyoto trip, from May 3 to May 6."]),
    ("trip-3", "2026-04-02T20:00:00+08:00", [
        "We changed the hotel for the Kyoto trip: we cancelled the Hotel Okura Kyoto and "
        "booked the Park Hyatt Kyoto instead."]),
    ("trip-4", "2026-05-03T21:00:00+08:00", [
        "We flew to Kyoto today and checked into the Park Hyatt Kyoto for the trip."]),
    ("trip-5", "2026-05-05T21:00:00+08:00", [
        "We hiked up to the Fushimi Inari shrine in Kyoto this morning.",
        "We were exhausted after the Fushimi Inari hike, so we went back to the Park "
        "Hyatt Kyoto early."]),
    ("trip-6", "2026-06-01T20:00:00+08:00", [
        "I still remember our Kyoto trip, the Park Hyatt Kyoto had an amazing view."]),
]


def seed_trip(server: Server, space: str = SPACE, consolidate: bool = True) -> dict:
    """The trip imported session by session and extracted after each (as the quiet-window job
    would), then the merge pass: → {"events": [...], "threads": [...]}."""
    events = []
    with server.http() as http:
        for session, at, texts in TRIP:
            messages = [{"seq": i + 1, "role": "user", "speaker": "Mel", "content": text,
                         "at": at.replace(":00:00", f":0{i}:00")} for i, text in enumerate(texts)]
            put = http.put(f"/v1/spaces/{space}/sessions/{session}/messages",
                           json={"messages": messages})
            assert put.status_code == 200, put.text
            extracted = http.post(f"/v1/spaces/{space}/extract", json={"session": session})
            assert extracted.status_code == 200, extracted.text
            events += extracted.json()["events"]
        if consolidate:
            assert http.post(f"/v1/spaces/{space}/consolidate", json={}).status_code == 200
        threads = http.get(f"/v1/spaces/{space}/threads").json()["threads"]
    return {"events": events, "threads": threads}


# Chinese text needs a CJK font (Debian: fonts-noto-cjk, or fonts-wqy-microhei): without one,
# Chromium draws every Chinese character as the same .notdef box. CJK_GLYPHS draws each
# character of a sample alone on a canvas in the page's own fonts, and the same for code
# points no font has (unassigned): real glyphs are inked and differ from each other and from
# the missing glyph; boxes (or blanks) are all alike.
CJK_SAMPLE = "编年回忆实验室奶糖体检"
NO_GLYPH = "\u0378\u0379\u0380"  # unassigned in Unicode: how a missing glyph renders here
CJK_GLYPHS = """([chars, missing]) => {
  const fonts = {body: getComputedStyle(document.body).fontFamily,
                 mono: getComputedStyle(document.documentElement).getPropertyValue('--mono').trim() || 'monospace'};
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 48;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (ch) => {
    ctx.clearRect(0, 0, 48, 48);
    ctx.fillText(ch, 4, 24);
    const alpha = ctx.getImageData(0, 0, 48, 48).data.filter((_, i) => i % 4 === 3);
    let ink = 0, hash = 2166136261;
    for (const a of alpha) {
      const on = a > 96 ? 1 : 0;
      ink += on;
      hash = Math.imul(hash ^ on, 16777619) >>> 0;
    }
    return {ink, hash, width: Math.round(ctx.measureText(ch).width * 10) / 10};
  };
  const out = {};
  for (const [name, family] of Object.entries(fonts)) {
    ctx.font = `32px ${family}`;
    ctx.textBaseline = 'middle';
    out[name] = {family, chars: [...chars].map(draw), missing: [...missing].map(draw)};
  }
  return out;
}"""


def cjk_font_problem(page) -> str | None:
    """Why Chinese text does not render with real glyphs in `page` (any loaded page of the
    app), or None when it does."""
    drawn = page.evaluate(CJK_GLYPHS, [CJK_SAMPLE, NO_GLYPH])
    for name, font in drawn.items():
        chars, missing = font["chars"], font["missing"]
        boxes = {m["hash"] for m in missing}
        shapes = {c["hash"] for c in chars}
        if (any(c["ink"] < 20 for c in chars) or len(shapes) < len(chars)
                or shapes & boxes):
            return (f"Chinese text renders as boxes in the {name} font ({font['family']}): "
                    f"{len(shapes)} distinct shapes for {len(chars)} characters, "
                    f"{len(shapes & boxes)} like a missing glyph. Install a CJK font: "
                    "apt-get install -y fonts-noto-cjk (or fonts-wqy-microhei); "
                    "fc-list :lang=zh lists what is there")
    return None
