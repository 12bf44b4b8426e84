"""The web app from the Lambda path (chalice.test.Client, no server, no browser): GET / is the
page (no-cache, a CSP that allows this origin only), assets are served under the bundle version
with long-lived caching and an ETag, every ES module import resolves, and nothing in the
folder points at another host. Also: both languages have every string the code asks for."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chalicelib.api import web

WEB = Path(web.__file__).resolve().parent.parent / "web"


@pytest.fixture
def http(client):
    return client.http


def test_the_page_is_served_at_the_root_without_a_key(http):
    resp = http.get("/")
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
    assert resp.headers["Cache-Control"] == "no-cache"
    assert re.fullmatch(r'"[0-9a-f]{32}"', resp.headers["ETag"])
    csp = resp.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "connect-src 'self'" in csp and "http" not in csp
    html = resp.body.decode()
    version = web.bundle().version
    assert f'src="web/{version}/app.js"' in html and 'type="module"' in html
    assert "{{" not in html  # every placeholder filled


def test_assets_are_cached_by_version_with_an_etag(http):
    html = http.get("/").body.decode()
    urls = re.findall(r'(?:href|src)="(web/[^"]+)"', html)
    assert {u.rsplit("/", 1)[-1] for u in urls} >= {"app.js", "app.css", "icon.svg"}
    for url in urls:
        resp = http.get("/" + url)
        assert resp.status_code == 200, url
        assert resp.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
        assert re.fullmatch(r'"[0-9a-f]{32}"', resp.headers["ETag"]), url
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert http.get(f"/web/{web.bundle().version}/app.js").headers["Content-Type"] \
        == "text/javascript; charset=utf-8"
    assert http.get(f"/web/{web.bundle().version}/app.css").headers["Content-Type"] \
        == "text/css; charset=utf-8"


def test_an_old_version_gets_the_current_file_uncached(http):
    resp = http.get("/web/0123456789ab/app.js")
    assert resp.status_code == 200
    assert resp.headers["Cache-Control"] == "no-cache"
    assert resp.body.decode() == (WEB / "app.js").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["nope.js", "index.html", "..", "%2e%2e%2fapp.py", "app.py"])
def test_only_files_of_the_folder_are_served(http, name):
    resp = http.get(f"/web/{web.bundle().version}/{name}")
    assert resp.status_code == 404
    assert json.loads(resp.body)["error"]["code"] == "not_found"


def test_every_module_import_resolves_and_nothing_points_elsewhere():
    files = {p.name: p.read_text(encoding="utf-8") for p in WEB.iterdir() if p.is_file()}
    assert set(files) <= {"index.html", *web.bundle().assets}, "a file the server would not serve"
    for name, text in files.items():
        for target in re.findall(r"""(?:^|\n)\s*import\s[^;]*?from\s+'([^']+)'""", text):
            assert target.startswith("./") and target[2:] in files, f"{name} imports {target}"
        for target in re.findall(r"""import\(\s*'([^']+)'""", text):
            assert target[2:] in files, f"{name} imports {target}"
        # only the SVG namespace, and examples in comments (loopback, "https://…/api/")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg|127\.0\.0\.1|…)", text), \
            f"{name} names another host"
        assert not re.search(r"\.innerHTML\b|\beval\(|new Function\(", text), name


def test_both_languages_have_every_string():
    source = (WEB / "i18n.js").read_text(encoding="utf-8")
    en_block = source[source.index("const EN = {"):source.index("const ZH = {")]
    zh_block = source[source.index("const ZH = {"):source.index("export const STRINGS")]
    key = re.compile(r"'([a-z][\w.]*)':")
    en, zh = set(key.findall(en_block)), set(key.findall(zh_block))
    assert en == zh, f"only English: {sorted(en - zh)}; only Chinese: {sorted(zh - en)}"
    used = set()
    for path in WEB.glob("*.js"):
        used |= set(re.findall(r"\bt\('([a-z][\w.]*)'", path.read_text(encoding="utf-8")))
    assert used <= en, f"strings without a translation: {sorted(used - en)}"

