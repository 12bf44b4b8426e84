"""A real SillyTavern 1.19.0 for end-to-end tests of the Annals extension.

- `ensure_sillytavern()`: the npm install, cached in ~/.cache/annals/sillytavern/1.19.0.
- `UpstreamModel`: an OpenAI-compatible double on loopback that records what it is asked.
- `SillyTavern`: the server on a fresh data root whose main API is Chat Completion, source
  "custom", pointed at the double, with one character ("Mika") and no first-run onboarding.
- `open_chat(page)` / `send(page, text)`: drive the real UI through Playwright and Chromium.

Typical use (an extension folder copied in before the server starts):

    with UpstreamModel(reply=lambda body: "Hi!") as upstream:
        st = SillyTavern(upstream.url)
        shutil.copytree(EXTENSION, st.extensions_dir / "annals")
        with st, chromium() as browser:
            page = st.new_page(browser)
            open_chat(page)
            send(page, "hello", expect="Hi!")
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.web.harness import REQUIRE_ENV, browser_missing, launch

VERSION = "1.19.0"
CACHE = Path.home() / ".cache" / "annals" / "sillytavern" / VERSION
INSTALLED_MARK = ".annals-installed"  # written only after `npm install` succeeded
USER = "default-user"  # the only user while enableUserAccounts is false
MODEL = "annals-double"
START_TIMEOUT_S = 120
__all__ = ["REQUIRE_ENV", "Character", "SillyTavern", "UpstreamModel", "chromium",
           "ensure_sillytavern", "open_chat", "send", "sillytavern_missing"]


# ---------------------------------------------------------------------------------------------
# The install


def tools_missing() -> str | None:
    """Why SillyTavern cannot be installed or run here (node or npm missing, node < 20)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (SillyTavern {VERSION} needs Node.js >= 20 and npm)"
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    if int(version.strip().lstrip("v").split(".")[0] or 0) < 20:
        return f"node {version.strip()} is too old (SillyTavern {VERSION} needs Node.js >= 20)"
    return None


def sillytavern_missing() -> str | None:
    """Why the SillyTavern end-to-end tests cannot run here (node, npm, Chromium), or None."""
    return tools_missing() or browser_missing()


def ensure_sillytavern(cache: Path = CACHE) -> Path:
    """The folder of SillyTavern's package (it holds server.js), installed by npm once."""
    package = cache / "node_modules" / "sillytavern"
    if (cache / INSTALLED_MARK).exists():
        return package
    missing = tools_missing()
    if missing:
        raise RuntimeError(missing)
    cache.mkdir(parents=True, exist_ok=True)
    # A lock, so that two xdist workers never run npm in the same folder at once.
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (cache / INSTALLED_MARK).exists():
            _npm_install(cache)
    return package


def _npm_install(cache: Path) -> None:
    if not (cache / "package.json").exists():  # else npm walks up and installs in a parent
        (cache / "package.json").write_text('{"private": true}\n')
    cmd = ["npm", "install", "--no-audit", "--no-fund", f"sillytavern@{VERSION}"]
    done = subprocess.run(cmd, cwd=cache, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cache}:\n{done.stdout[-3000:]}"
                           f"\n{done.stderr[-3000:]}")
    found = json.loads((cache / "node_modules/sillytavern/package.json").read_text())["version"]
    if found != VERSION:
        raise RuntimeError(f"npm installed SillyTavern {found}, not {VERSION}, in {cache}")
    (cache / INSTALLED_MARK).write_text(VERSION + "\n")


# ---------------------------------------------------------------------------------------------
# The upstream model: what SillyTavern's "Custom (OpenAI-compatible)" source talks to


Reply = Callable[[dict], str]


class UpstreamModel:
    """An OpenAI-compatible server on 127.0.0.1: GET /v1/models, POST /v1/chat/completions
    (plain JSON, or SSE chunks when the body asks `stream`). `reply(body)` gives the text
    of each answer, so a test can answer a JSON reading task unlike a chat turn. Every POST
    body is kept, in order, in `requests`."""

    def __init__(self, reply: Reply | str = "Nice to meet you!", model: str = MODEL):
        self.reply: Reply = reply if callable(reply) else (lambda _body, text=reply: text)
        self.model = model
        self._received: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> UpstreamModel:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        """The base URL SillyTavern calls `custom_url` (it appends /models, /chat/completions)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def record(self, path: str, body: dict) -> None:
        with self._lock:
            self._received.append((path, body))

    @property
    def requests(self) -> list[dict]:
        """Every POST body received so far (a copy of the list)."""
        with self._lock:
            return [body for _, body in self._received]

    def chat_requests(self) -> list[dict]:
        """The bodies of POST /v1/chat/completions, in order."""
        with self._lock:
            return [body for path, body in self._received if path.endswith("/chat/completions")]

    def wait_for(self, test: Callable[[dict], bool], timeout: float = 30) -> dict:
        """The first chat-completions body for which `test` holds, waiting up to `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [body for body in self.chat_requests() if test(body)]
            if found:
                return found[0]
            time.sleep(0.1)
        raise AssertionError(f"no matching chat-completions request in {timeout} s; got "
                             f"{json.dumps(self.chat_requests(), ensure_ascii=False)[:3000]}")


def _handler_for(upstream: UpstreamModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet: pytest shows failures, not traffic
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json({"object": "list", "data": [
                    {"id": upstream.model, "object": "model", "owned_by": "annals-tests"}]})
            else:
                self._json({"error": {"message": f"no route {self.path}"}}, status=404)

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(size) or b"{}")
            upstream.record(self.path, body)
            if not self.path.endswith("/chat/completions"):
                self._json({"error": {"message": f"no route {self.path}"}}, status=404)
                return
            text = upstream.reply(body)
            if body.get("stream"):
                self._stream(text)
            else:
                self._json(_completion(upstream.model, text))

        def _json(self, payload: dict, status: int = 200) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, text: str) -> None:
            # HTTP/1.0 without Content-Length: the stream ends when the connection closes.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for chunk in _chunks(upstream.model, text):
                self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def _completion(model: str, text: str) -> dict:
    return {"id": "chatcmpl-annals", "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split()),
                      "total_tokens": 10 + len(text.split())}}


def _chunks(model: str, text: str) -> Iterator[dict]:
    """The reply in a few pieces (words), as a streaming OpenAI server sends it."""
    words = text.split(" ")
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
    base = {"id": "chatcmpl-annals", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}
    for i, piece in enumerate(pieces):
        delta = {"role": "assistant", "content": piece} if i == 0 else {"content": piece}
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


# ---------------------------------------------------------------------------------------------
# The server


@dataclass
class Character:
    """A character card. An empty `first_mes` means no greeting, so a fresh chat is empty and
    counts of `.mes` are only the test's own turns."""

    name: str = "Mika"
    description: str = "Mika is a cheerful barista who remembers her regulars."
    personality: str = "warm, curious"
    scenario: str = "{{user}} chats with {{char}} at her café."
    first_mes: str = ""

    def card(self) -> dict:
        """A Character Card V2, with the V1 fields mirrored at the top as SillyTavern writes."""
        fields = {"name": self.name, "description": self.description,
                  "personality": self.personality, "scenario": self.scenario,
                  "first_mes": self.first_mes, "mes_example": ""}
        data = {**fields, "creator_notes": "", "system_prompt": "",
                "post_history_instructions": "", "alternate_greetings": [], "tags": [],
                "creator": "annals-tests", "character_version": "1",
                "extensions": {"talkativeness": "0.5", "fav": False, "world": "",
                               "depth_prompt": {"prompt": "", "depth": 4, "role": "system"}}}
        # `chat` fixed: without it SillyTavern names a new chat file on every read of the card.
        return {**fields, "creatorcomment": "", "avatar": "none", "talkativeness": "0.5",
                "fav": False, "tags": [], "chat": f"{self.name} - annals",
                "create_date": "2026-01-01T00:00:00.000Z",
                "spec": "chara_card_v2", "spec_version": "2.0", "data": data}

    def png(self) -> bytes:
        """The card as SillyTavern stores it: a PNG whose tEXt chunk `chara` is base64 JSON.
        (1.19 lists only *.png files in characters/; a bare .json card is not picked up.)"""
        text = b"chara\0" + base64.b64encode(json.dumps(self.card()).encode())
        size = 64  # a real image (an orange square): the page shows it as the avatar
        raw = b"".join(b"\0" + b"\xd8\x8c\x6a" * size for _ in range(size))
        header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"tEXt", text)
                + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SillyTavern:
    """`node server.js` on a fresh data root, prepared when the object is made (so a test can
    put an extension into `extensions_dir` first) and started by `with`.

    upstream_url: the UpstreamModel's `url`; stream: the "Streaming" switch of Chat
    Completion; characters: the cards in characters/; root: a folder to use (else a temp
    folder, removed at exit)."""

    def __init__(self, upstream_url: str, *, model: str = MODEL, stream: bool = False,
                 characters: tuple[Character, ...] = (Character(),),
                 root: Path | None = None, port: int | None = None):
        self.package = ensure_sillytavern()
        self._own_root = root is None
        self.root = Path(root or tempfile.mkdtemp(prefix="annals-st-")).resolve()
        self.port = port or _free_port()
        self.data_root = self.root / "data"
        self.config_path = self.root / "config.yaml"
        self.log_path = self.root / "server.log"
        self.process: subprocess.Popen | None = None
        self._write_config()
        self._write_settings(upstream_url, model, stream)
        for character in characters:
            (self.user_dir / "characters").mkdir(parents=True, exist_ok=True)
            (self.user_dir / "characters" / f"{character.name}.png").write_bytes(character.png())
        self.extensions_dir.mkdir(parents=True, exist_ok=True)
        self._share_webpack_cache()

    # -- where things are

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def user_dir(self) -> Path:
        return self.data_root / USER

    @property
    def extensions_dir(self) -> Path:
        """Third-party extensions of the default user: put `<name>/manifest.json` here before
        start; the page loads it as /scripts/extensions/third-party/<name>/."""
        return self.user_dir / "extensions"

    @property
    def chats_dir(self) -> Path:
        """Chats are `<chats_dir>/<character>/<chat name>.jsonl` (a header line, then turns)."""
        return self.user_dir / "chats"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    # -- preparing the data root

    def _write_config(self) -> None:
        # JSON is YAML: no YAML writer needed. The server fills in every missing key from
        # default/config.yaml on start (and rewrites this file as YAML).
        config = {
            "dataRoot": str(self.data_root), "listen": False, "port": self.port,
            "whitelistMode": False, "basicAuthMode": False, "enableUserAccounts": False,
            "browserLaunch": {"enabled": False},
            # Nothing may reach the internet: no extension auto-update (git), no model or
            # tokenizer downloads from Hugging Face.
            "extensions": {"enabled": True, "autoUpdate": False,
                           "models": {"autoDownload": False}},
            "enableDownloadableTokenizers": False,
            # Thumbnails decode PNGs with a wasm file that npm hoists out of the package
            # folder, which 1.19's patched fetch refuses ("outside of the server directory"):
            # every avatar would log an error. Without thumbnails the originals are served.
            "thumbnails": {"enabled": False},
            "logging": {"enableAccessLog": False, "minLogLevel": 0},
        }
        self.config_path.write_text(json.dumps(config, indent=1))

    def _write_settings(self, upstream_url: str, model: str, stream: bool) -> None:
        # Start from the version's own default settings (the server would copy the same file
        # in on first start, but never over an existing one), then change only what matters.
        settings = json.loads((self.package / "default/content/settings.json").read_text())
        settings.update(firstRun=False,  # else the onboarding popup asks for a user name
                        currentVersion=VERSION,  # else "version changed": extension updates
                        main_api="openai")  # "openai" is Chat Completion, whatever the source
        settings["power_user"]["auto_connect"] = True  # connects to the API on page load
        settings["oai_settings"].update(chat_completion_source="custom", custom_url=upstream_url,
                                        custom_model=model, stream_openai=stream)
        self.user_dir.mkdir(parents=True, exist_ok=True)
        (self.user_dir / "settings.json").write_text(json.dumps(settings, indent=1))

    def _share_webpack_cache(self) -> None:
        # Each start compiles the frontend libraries with webpack (about 35 s on 2 cores) into
        # <dataRoot>/_webpack, or into <package>/dist/_webpack inside Docker. Pointing the
        # fresh data root at the package's folder lets every start after the first reuse it.
        shared = self.package / "dist" / "_webpack"
        shared.mkdir(parents=True, exist_ok=True)
        (self.data_root / "_webpack").symlink_to(shared, target_is_directory=True)

    # -- running

    def command(self) -> list[str]:
        return ["node", "server.js", "--configPath", str(self.config_path),
                "--dataRoot", str(self.data_root), "--port", str(self.port),
                "--listen", "false", "--whitelist", "false", "--basicAuthMode", "false",
                "--browserLaunchEnabled", "false"]

    def __enter__(self) -> SillyTavern:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.command(), cwd=self.package, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def wait_ready(self, timeout: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process and self.process.poll() is not None:
                raise RuntimeError(f"SillyTavern exited with {self.process.returncode} (log: "
                                   f"{self.log_path}):\n"
                                   f"{self.log()[-6000:]}")
            with contextlib.suppress(OSError), \
                    urllib.request.urlopen(self.url + "/", timeout=5) as answer:
                if answer.status == 200:
                    return
            time.sleep(0.5)
        raise RuntimeError(f"SillyTavern did not answer on {self.url} in {timeout} s; its log "
                           f"({self.log_path}):\n"
                           f"{self.log()[-6000:]}")

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after 10 s."""
        if self.process is None or self.process.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def new_page(self, browser, **context_options):
        """A page in a fresh browser context whose base URL is this server."""
        context = browser.new_context(base_url=self.url, viewport={"width": 1280, "height": 900},
                                      **context_options)
        page = context.new_page()
        page.set_default_timeout(30_000)
        return page


@contextlib.contextmanager
def chromium():
    """Debian's Chromium through Playwright, as tests/web launches it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


# ---------------------------------------------------------------------------------------------
# Driving the page

_CONTEXT = "window.SillyTavern && SillyTavern.getContext && SillyTavern.getContext()"


def open_chat(page, character: str = "Mika", *, url: str | None = None,
              timeout: float = 60_000) -> None:
    """Load the UI (`url`, else "/" on the context's base URL), close any popups, pick the
    character and return once its chat is open and the API is connected."""
    page.goto(url or "/", wait_until="domcontentloaded")
    page.wait_for_function(f"() => !!({_CONTEXT})", timeout=timeout)
    # APP_READY is an auto-fire event: a listener added after it was emitted runs at once.
    # It comes after settings, extensions and the character list, and after a first-run
    # onboarding popup, which is why popups are closed while waiting.
    page.evaluate(f"""() => {{
        const c = {_CONTEXT};
        c.eventSource.on(c.eventTypes.APP_READY, () => {{ window.__annalsAppReady = true; }});
    }}""")
    _wait_closing_popups(page, f"name => {{ const c = {_CONTEXT}; return !!window.__annalsAppReady"
                         " && c.characters.some(x => x.name === name); }", character, timeout)
    select_character(page, character)
    _wait_closing_popups(page, f"name => {{ const c = {_CONTEXT}; return c.name2 === name"
                         " && window.__annalsChatsLoaded > 0"
                         " && c.onlineStatus !== 'no_connection'; }", character, timeout)
    dismiss_popups(page)


def _wait_closing_popups(page, condition: str, arg, timeout: float) -> None:
    """Wait for a JS `condition(arg)`, closing popups every second meanwhile."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    while True:
        dismiss_popups(page)
        try:
            page.wait_for_function(condition, arg=arg, timeout=1_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise


# SillyTavern's own loading overlay ("Initializing…") is also a <dialog class="popup">, a
# transparent one: Escape on it opens a "Force-close Blocking Popup" confirmation. Never touch it.
_POPUPS = "dialog.popup[open]:not(.transparent_dialogue_popup)"


def dismiss_popups(page) -> None:
    """Close every open SillyTavern popup but the loading overlay: Cancel, else Close, else
    OK (the first-run onboarding has only "Save"), else Escape."""
    from playwright.sync_api import Error as PlaywrightError

    for _ in range(5):
        dialogs = page.locator(_POPUPS)
        if dialogs.count() == 0:
            return
        dialog = dialogs.last
        buttons = [dialog.locator(b).first for b in
                   (".popup-button-cancel", ".popup-button-close", ".popup-button-ok")]
        # A popup may close itself meanwhile: a failed click is not an error.
        with contextlib.suppress(PlaywrightError):
            visible = [b for b in buttons if b.is_visible()]
            if visible:
                visible[0].click(timeout=2_000)
            else:
                page.keyboard.press("Escape")
        page.wait_for_timeout(300)


def select_character(page, name: str) -> None:
    """Click the character in the right-hand character list (opening the drawer if shut).

    Then wait for CHAT_LOADED, not merely for the chat id: 1.19 sets name2 and the chat id
    before it renders the chat, and a message sent in between is rendered twice (the chat's
    redraw appends it again), so `.mes` counts come out one too many."""
    page.evaluate(f"""() => {{
        const c = {_CONTEXT};
        window.__annalsChatsLoaded = 0;
        c.eventSource.on(c.eventTypes.CHAT_LOADED, () => {{ window.__annalsChatsLoaded++; }});
    }}""")
    card = page.locator("#rm_print_characters_block .character_select").filter(
        has=page.locator(f".ch_name:text-is({json.dumps(name)})")).first
    if not card.is_visible():
        page.locator("#rightNavDrawerIcon").click()
    card.click()


def send(page, text: str, *, expect: str | None = None, timeout: float = 60_000) -> str:
    """Type `text` into #send_textarea, send it, wait for the character's reply to be
    rendered and the generation to end; the reply's text. `expect`: a text the reply must
    contain (the upstream's answer)."""
    replies = page.locator('#chat .mes[is_user="false"][is_system="false"]')
    before = replies.count()
    page.locator("#send_textarea").fill(text)
    page.locator("#send_but").click()
    page.wait_for_function(
        "n => document.querySelectorAll('#chat .mes[is_user=\"false\"][is_system=\"false\"]')"
        ".length > n", arg=before, timeout=timeout)
    # The generation is over when the Stop button is hidden again (streaming fills the
    # message while it shows).
    page.locator("#mes_stop").wait_for(state="hidden", timeout=timeout)
    last = replies.last.locator(".mes_text")
    if expect is not None:
        last.filter(has_text=expect).wait_for(timeout=timeout)
    return last.inner_text()
