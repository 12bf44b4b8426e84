"""Bearer-key auth for every route but health."""

from __future__ import annotations

import hmac
import os
import secrets
import sys
from pathlib import Path

from chalicelib.config import Settings
from chalicelib.domain.errors import Unauthorized


def resolve_api_key(settings: Settings, announce: bool = True) -> str:
    """ANNALS_API_KEY if set; in AWS the secret the stack generated (ANNALS_API_KEY_SECRET);
    locally the key kept in the data dir, else a new one, written there (owner-only
    permissions) and printed once so the operator can copy it."""
    if settings.api_key:
        return settings.api_key
    if settings.backend == "aws":
        return key_from_secret(settings)
    path: Path = settings.key_path
    if path.exists():
        kept = path.read_text().strip()
        if kept:
            return kept
        path.unlink()  # an empty file is a crash between create and write: start over
    key = "ak_" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    if announce:
        print(f"Annals: generated an API key (kept in {path}):\n  {key}", file=sys.stderr)
    return key


def key_from_secret(settings: Settings) -> str:
    """The API key stored as a plain secret string in Secrets Manager."""
    if not settings.api_key_secret:
        raise RuntimeError("ANNALS_BACKEND=aws needs ANNALS_API_KEY_SECRET or ANNALS_API_KEY")
    from chalicelib.adapters.secrets import read_secret

    return read_secret(settings.api_key_secret, region=settings.region)


def check_bearer(header: str | None, key: str) -> None:
    if not header:
        raise Unauthorized("missing Authorization: Bearer <key> header")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization must be 'Bearer <key>'")
    # compare_digest: the time taken does not reveal how much of the key matched.
    if not hmac.compare_digest(token.strip().encode(), key.encode()):
        raise Unauthorized("invalid API key")
