"""API keys scoped to spaces and to read / write / admin: create, list, revoke, verify.

A key is `ak_<id>_<secret>`: a 16-hex-digit id (how it is listed and revoked) and 256 random
bits. Only the sha256 of the whole key is stored (`domain.records.ApiKey`), so the store never
holds a usable key; the plaintext is shown once, when the key is created. Keys live as records
through the Store port (SQLite `records` locally, the DynamoDB table on AWS).

Access: "write" implies "read"; "admin" implies both on every space and may manage keys.
The bootstrap admin key (ANNALS_API_KEY, the data dir's key file, or the stack's secret) is no
record: `chalicelib.api.auth` checks it before it asks here.

Revocation: `verify_key` reads the record on every call unless the caller allows a cache
(`cache_seconds`; the AWS handler allows AWS_CACHE_SECONDS per container). A revocation made in
this process drops the cached entry at once.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from chalicelib.domain.errors import NotFound
from chalicelib.domain.records import KEYS_SCOPE, ApiKey, ApiKeyUse
from chalicelib.ports import Services
from chalicelib.usecases.spaces import all_spaces, space_known

Access = Literal["read", "write", "admin"]
PREFIX = "ak_"
AWS_CACHE_SECONDS = 30.0  # how long a Lambda container trusts a key record it has read
TOUCH_EVERY_SECONDS = 60.0  # last-used times are written at most this often per key, process
_RANK = {"read": 1, "write": 2, "admin": 3}
_ID_RE = re.compile(r"[0-9a-f]{16}")
log = logging.getLogger("annals.keys")
monotonic = time.monotonic  # the cache's clock (tests move it)


# ------------------------------------------------------------------ scope of a request


@dataclass(frozen=True)
class KeyScope:
    """What the key of one request may do. `spaces` None: every space."""

    access: Access
    spaces: frozenset[str] | None = None
    key_id: str | None = None  # None: the bootstrap admin key
    label: str = ""

    @property
    def admin(self) -> bool:
        return self.access == "admin"

    def covers(self, space: str) -> bool:
        return self.admin or self.spaces is None or space in self.spaces

    def allows(self, access: Access, space: str | None = None) -> bool:
        """May this key do `access` (on `space`, when the request names one)?"""
        if _RANK[self.access] < _RANK[access]:
            return False
        return space is None or self.covers(space)


BOOTSTRAP_ADMIN = KeyScope(access="admin", label="bootstrap admin key")


def scope_of(record: ApiKey) -> KeyScope:
    spaces = None if record.spaces is None or record.access == "admin" \
        else frozenset(record.spaces)
    return KeyScope(access=record.access, spaces=spaces, key_id=record.key, label=record.label)


# ------------------------------------------------------------------ creating and listing


class CreateKeyRequest(BaseModel):
    """POST /v1/keys. `spaces`: a list of space ids, or "*" for every space (admin keys cover
    every space and may leave it out)."""

    model_config = ConfigDict(extra="forbid")
    spaces: list[str] | Literal["*"] | None = None
    access: Access = "read"
    label: str = Field(default="", max_length=200)

    @field_validator("spaces")
    @classmethod
    def _valid_spaces(cls, value: list[str] | str | None) -> list[str] | str | None:
        if isinstance(value, list):
            if not value:
                raise ValueError('give at least one space id, or "*" for every space')
            for space in value:
                if not re.fullmatch(r"[A-Za-z0-9_.:@-]{1,128}", space):
                    raise ValueError(f"{space!r} is not a space id (1-128 characters of "
                                     "letters, digits and _ . : @ -)")
            return sorted(set(value))
        return value

    @model_validator(mode="after")
    def _spaces_fit_access(self) -> CreateKeyRequest:
        if self.access == "admin":
            if isinstance(self.spaces, list):
                raise ValueError('an admin key covers every space: leave spaces out or give "*"')
        elif self.spaces is None:
            raise ValueError('spaces is required: a list of space ids, or "*" for every space')
        return self

    @property
    def space_list(self) -> list[str] | None:
        return self.spaces if isinstance(self.spaces, list) else None


class KeyInfo(BaseModel):
    """What GET /v1/keys shows of a key: never the key nor its hash."""

    id: str
    label: str
    access: Access
    spaces: list[str] | Literal["*"] = Field(description='space ids, or "*" for every space')
    created_at: datetime
    last_used_at: datetime | None = Field(
        default=None, description=f"to within {TOUCH_EVERY_SECONDS:.0f} s")
    revoked: bool = False
    revoked_at: datetime | None = None


class NewKey(KeyInfo):
    """POST /v1/keys: the key itself, this once."""

    key: str = Field(description="the bearer key: shown this once, only its sha256 is kept")


class KeyList(BaseModel):
    keys: list[KeyInfo]


class SpaceList(BaseModel):
    """GET /v1/spaces: the spaces the calling key may see."""

    spaces: list[str]
    all_spaces: bool = Field(description="the key may use every space, these and new ones")
    access: Access
    empty: list[str] = Field(
        default_factory=list, description="the listed spaces nothing was written to yet: "
        "their reads answer 404 unknown_space until a write (a key limited to named spaces "
        "lists them all; an unrestricted key lists only spaces that hold something)")


def hash_key(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_key() -> tuple[str, str]:
    """(id, plaintext key)."""
    key_id = secrets.token_hex(8)
    return key_id, f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def key_id_of(token: str) -> str | None:
    """The id inside a key of ours, or None for anything else (e.g. a bootstrap key)."""
    if not token.startswith(PREFIX):
        return None
    key_id, sep, secret = token[len(PREFIX):].partition("_")
    return key_id if sep and secret and _ID_RE.fullmatch(key_id) else None


def create_key(services: Services, request: CreateKeyRequest) -> NewKey:
    key_id, token = new_key()
    record = ApiKey(scope=KEYS_SCOPE, key=key_id, key_hash=hash_key(token),
                    access=request.access, spaces=request.space_list, label=request.label,
                    created_at=services.clock())
    services.store.put_record(record)
    return NewKey(**key_info(record).model_dump(), key=token)


def key_info(record: ApiKey, use: ApiKeyUse | None = None) -> KeyInfo:
    all_spaces = record.spaces is None or record.access == "admin"
    return KeyInfo(id=record.key, label=record.label, access=record.access,
                   spaces="*" if all_spaces else list(record.spaces or []),
                   created_at=record.created_at,
                   last_used_at=use.last_used_at if use else None,
                   revoked=record.revoked_at is not None, revoked_at=record.revoked_at)


def list_keys(services: Services) -> KeyList:
    """Every key (revoked ones too), oldest first."""
    uses = {u.key: u for u in services.store.list_records(ApiKeyUse, KEYS_SCOPE)}
    records = sorted(services.store.list_records(ApiKey, KEYS_SCOPE),
                     key=lambda r: (r.created_at, r.key))
    return KeyList(keys=[key_info(r, uses.get(r.key)) for r in records])


def revoke_key(services: Services, key_id: str) -> KeyInfo:
    """Revoke a key: refused from the next request on (AWS: within AWS_CACHE_SECONDS).
    Revoking twice keeps the first time."""
    record = services.store.get_record(ApiKey, KEYS_SCOPE, key_id) if _ID_RE.fullmatch(key_id) \
        else None
    if record is None:
        raise NotFound(f"no API key {key_id!r}", code="unknown_key")
    if record.revoked_at is None:
        record = record.model_copy(update={"revoked_at": services.clock()})
        services.store.put_record(record)
    _cache_for(services.store).drop(key_id)
    return key_info(record, services.store.get_record(ApiKeyUse, KEYS_SCOPE, key_id))


# ------------------------------------------------------------------ verifying


class _KeyCache:
    """Key records read recently, per store, for callers that allow a cache (AWS)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[float, ApiKey]] = {}
        self.touched: dict[str, float] = {}
        self.lock = threading.Lock()

    def get(self, key_id: str, max_age: float) -> ApiKey | None:
        if max_age <= 0:
            return None
        with self.lock:
            hit = self.items.get(key_id)
        if hit is None or monotonic() - hit[0] >= max_age:
            return None
        return hit[1]

    def put(self, record: ApiKey) -> None:
        with self.lock:
            if len(self.items) > 1000:
                self.items.clear()
            self.items[record.key] = (monotonic(), record)

    def drop(self, key_id: str) -> None:
        with self.lock:
            self.items.pop(key_id, None)

    def due_touch(self, key_id: str) -> bool:
        now = monotonic()
        with self.lock:
            last = self.touched.get(key_id)
            if last is not None and now - last < TOUCH_EVERY_SECONDS:
                return False
            self.touched[key_id] = now
            return True


_caches: weakref.WeakKeyDictionary[object, _KeyCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache_for(store: object) -> _KeyCache:
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            cache = _caches[store] = _KeyCache()
        return cache


def verify_key(services: Services, token: str, *, cache_seconds: float = 0.0) -> KeyScope | None:
    """The scope of a key of ours, or None when it is unknown, revoked or wrong. The stored
    hash is compared in constant time. `cache_seconds` > 0 lets a record read that long ago
    stand in for a fresh read (so a revocation elsewhere takes up to that long to apply)."""
    key_id = key_id_of(token)
    if key_id is None:
        return None
    cache = _cache_for(services.store)
    record = cache.get(key_id, cache_seconds)
    if record is None:
        record = services.store.get_record(ApiKey, KEYS_SCOPE, key_id)
        if record is None:
            return None
        if cache_seconds > 0:
            cache.put(record)
    if not hmac.compare_digest(record.key_hash.encode(), hash_key(token).encode()):
        return None
    if record.revoked_at is not None:
        return None
    if cache.due_touch(key_id):
        try:  # bookkeeping: a failed write must not turn a good key away
            services.store.put_record(ApiKeyUse(scope=KEYS_SCOPE, key=key_id,
                                                last_used_at=services.clock()))
        except Exception:
            log.warning("could not note the use of API key %s", key_id, exc_info=True)
    return scope_of(record)


# ------------------------------------------------------------------ spaces


def visible_spaces(services: Services, scope: KeyScope) -> SpaceList:
    """GET /v1/spaces: the spaces this key may see. A key limited to named spaces sees its
    list (data or not); an unrestricted key sees every space that has data."""
    if scope.spaces is not None and not scope.admin:
        named = sorted(scope.spaces)
        return SpaceList(spaces=named, all_spaces=False, access=scope.access,
                         empty=[s for s in named if not space_known(services, s)])
    return SpaceList(spaces=all_spaces(services), all_spaces=True, access=scope.access)

