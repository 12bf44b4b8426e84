"""The web app, served by the same Chalice app as the API (Lambda, `annals serve`, chalice.test).

The app is plain HTML, CSS and ES modules in chalicelib/web/ (no build step; Chalice packages the
folder with chalicelib). Two public routes serve it (the page asks for a key itself and sends
it as a bearer header to /v1/…, so nothing here needs one):

- GET /  — index.html, with every asset URL carrying the bundle version, `no-cache`;
- GET /web/{version}/{asset} — one file of the folder. The version is a hash of every file, so
  a URL names one content: with the current version it is cached for a year (`immutable`);
  with any other (a page loaded before an upgrade) the current file is served `no-cache`.
  ES modules import each other by relative URL (`./api.js`), so they keep the version too.

Only files in the folder with a known text type are served (a fixed table built once per
process; no path from a request reaches the file system), each with a strong ETag. The page's
Content-Security-Policy allows scripts, styles and requests to this origin only: nothing may
load from the internet. URLs are relative, so the page works under a stage prefix
(https://…/api/) too. docs/web.md.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from chalice import Response

from chalicelib import __version__
from chalicelib.domain.errors import NotFound

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
INDEX = "index.html"
INDEX_PATH = "/"
ASSET_PATH = "/web/{version}/{asset}"
PUBLIC_PATHS = frozenset({INDEX_PATH, ASSET_PATH})

TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml; charset=utf-8",
    ".json": "application/json; charset=utf-8",
}
HTML = "text/html; charset=utf-8"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
SECURITY = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


@dataclass(frozen=True)
class Asset:
    body: str
    content_type: str
    etag: str


def etag(text: str) -> str:
    return '"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


@dataclass(frozen=True)
class Bundle:
    version: str
    index: Asset
    assets: dict[str, Asset]


@functools.cache
def bundle() -> Bundle:
    """The folder, read once per process: its assets, their version and the rendered page."""
    files = sorted(p for p in WEB_DIR.iterdir() if p.is_file() and p.suffix in TYPES)
    digest = hashlib.sha256()
    assets = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        digest.update(path.name.encode() + b"\0" + text.encode() + b"\0")
        assets[path.name] = Asset(text, TYPES[path.suffix], etag(text))
    version = digest.hexdigest()[:12]
    page = ((WEB_DIR / INDEX).read_text(encoding="utf-8")
            .replace("{{version}}", version).replace("{{app_version}}", __version__))
    return Bundle(version, Asset(page, HTML, etag(page)), assets)


def index() -> Response:
    page = bundle().index
    return Response(body=page.body, status_code=200, headers={
        "Content-Type": page.content_type, "Cache-Control": REVALIDATE, "ETag": page.etag,
        "Content-Security-Policy": CSP, **SECURITY})


def asset(version: str, name: str) -> Response:
    current = bundle()
    found = current.assets.get(name)
    if found is None:
        raise NotFound(f"no web asset {name!r}")
    cache = IMMUTABLE if version == current.version else REVALIDATE
    return Response(body=found.body, status_code=200, headers={
        "Content-Type": found.content_type, "Cache-Control": cache, "ETag": found.etag,
        **SECURITY})
