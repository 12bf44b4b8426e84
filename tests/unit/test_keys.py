"""chalicelib.usecases.keys and the auth decisions in chalicelib.api.auth: scoped API keys,
stored hashed, verified in constant time, revoked from the next request; `annals keys`."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from chalicelib.api.auth import Forbidden, authorize, identify, required_access
from chalicelib.domain.errors import NotFound, Unauthorized
from chalicelib.domain.models import SaveEventRequest
from chalicelib.domain.records import KEYS_SCOPE, ApiKey, ApiKeyUse
from chalicelib.usecases import events as events_uc
from chalicelib.usecases import keys as keys_uc
from chalicelib.usecases.keys import BOOTSTRAP_ADMIN, CreateKeyRequest, KeyScope
from tests.conftest import API_KEY
from tests.unit.conftest import T0


def create(services, spaces=("a",), access="read", label=""):
    spaces = spaces if isinstance(spaces, str) or spaces is None else list(spaces)
    return keys_uc.create_key(services, CreateKeyRequest(spaces=spaces, access=access,
                                                         label=label))


def bearer(key: str) -> str:
    return f"Bearer {key}"


class TestFormatAndStorage:
    def test_key_format(self, services):
        created = create(services)
        prefix, key_id, secret = created.key.split("_", 2)
        assert prefix == "ak" and key_id == created.id and len(key_id) == 16
        assert len(secret) >= 40  # 256 random bits, url-safe base64
        assert keys_uc.key_id_of(created.key) == created.id

    @pytest.mark.parametrize("token", [
        "", "ak_", "ak_0123456789abcdef", "ak_0123456789abcdef_", "xx_0123456789abcdef_s",
        "ak_0123456789ABCDEF_s", "ak_0123_s", API_KEY, "ak_" + "x" * 43,
    ])
    def test_foreign_tokens_have_no_id(self, token):
        assert keys_uc.key_id_of(token) is None

    def test_only_the_hash_is_stored(self, services):
        created = create(services, label="phone")
        record = services.store.get_record(ApiKey, KEYS_SCOPE, created.id)
        assert record.key_hash == hashlib.sha256(created.key.encode()).hexdigest()
        assert created.key not in record.model_dump_json()
        secret = created.key.split("_", 2)[2]
        assert secret not in record.model_dump_json()

    def test_sqlite_rows_hold_no_key(self, sqlite_services):
        created = create(sqlite_services, spaces="*", access="write")
        keys_uc.verify_key(sqlite_services, created.key)  # a use is noted too
        con = sqlite3.connect(sqlite_services.settings.db_path)
        rows = con.execute("SELECT kind, scope, key, body FROM records"
                           " WHERE kind LIKE 'api-key%'").fetchall()
        con.close()
        assert {r[0] for r in rows} == {"api-key", "api-key-use"}
        secret = created.key.split("_", 2)[2]
        assert not any(secret in str(cell) for row in rows for cell in row)
        assert any(hashlib.sha256(created.key.encode()).hexdigest() in r[3] for r in rows)

    def test_keys_are_unique(self, services):
        made = [create(services) for _ in range(20)]
        assert len({m.id for m in made}) == 20 and len({m.key for m in made}) == 20


class TestCreateRequest:
    def test_space_list_is_sorted_and_deduplicated(self):
        assert CreateKeyRequest(spaces=["b", "a", "b"]).space_list == ["a", "b"]

    def test_star_means_every_space(self):
        req = CreateKeyRequest(spaces="*", access="write")
        assert req.space_list is None and req.access == "write"

    def test_access_defaults_to_read(self):
        assert CreateKeyRequest(spaces=["a"]).access == "read"

    @pytest.mark.parametrize("body", [
        {},  # a non-admin key must name its spaces
        {"spaces": []},
        {"spaces": ["bad/space"]},
        {"spaces": ["a"], "access": "owner"},
        {"spaces": ["a"], "access": "admin"},  # admin keys cover every space
        {"spaces": "all"},
        {"spaces": ["a"], "extra": 1},
        {"spaces": ["a"], "label": "x" * 201},
    ])
    def test_refused(self, body):
        with pytest.raises(ValidationError):
            CreateKeyRequest.model_validate(body)

    def test_admin_needs_no_spaces(self):
        assert CreateKeyRequest(access="admin").space_list is None
        assert CreateKeyRequest(access="admin", spaces="*").space_list is None


class TestScope:
    @pytest.mark.parametrize("access,needed,ok", [
        ("read", "read", True), ("read", "write", False), ("read", "admin", False),
        ("write", "read", True), ("write", "write", True), ("write", "admin", False),
        ("admin", "read", True), ("admin", "write", True), ("admin", "admin", True),
    ])
    def test_write_implies_read_admin_implies_all(self, access, needed, ok):
        assert KeyScope(access=access).allows(needed, "any") is ok

    def test_spaces(self):
        scope = KeyScope(access="write", spaces=frozenset({"a"}))
        assert scope.allows("write", "a") and scope.allows("read", "a")
        assert not scope.allows("read", "b")
        assert scope.allows("read", None)  # routes without a space (GET /v1/spaces)
        assert KeyScope(access="read").allows("read", "anything")
        assert KeyScope(access="admin", spaces=frozenset({"a"})).covers("b")


class TestVerify:
    def test_good_key(self, services):
        created = create(services, spaces=["a", "b"], access="write", label="bot")
        scope = keys_uc.verify_key(services, created.key)
        assert scope == KeyScope(access="write", spaces=frozenset({"a", "b"}),
                                 key_id=created.id, label="bot")

    def test_wrong_secret_unknown_id_and_foreign_tokens(self, services):
        created = create(services)
        wrong = created.key[:-2] + ("AA" if not created.key.endswith("AA") else "BB")
        assert keys_uc.verify_key(services, wrong) is None
        assert keys_uc.verify_key(services, "ak_0123456789abcdef_secret") is None
        assert keys_uc.verify_key(services, "nonsense") is None

    def test_revoked_key_is_refused_at_once(self, services):
        created = create(services)
        assert keys_uc.verify_key(services, created.key) is not None
        info = keys_uc.revoke_key(services, created.id)
        assert info.revoked and info.revoked_at is not None
        assert keys_uc.verify_key(services, created.key) is None

    def test_revoked_elsewhere_is_refused_at_once_without_a_cache(self, services):
        created = create(services)
        assert keys_uc.verify_key(services, created.key) is not None
        record = services.store.get_record(ApiKey, KEYS_SCOPE, created.id)
        services.store.put_record(record.model_copy(update={"revoked_at": T0}))  # "elsewhere"
        assert keys_uc.verify_key(services, created.key) is None

    def test_cache_bounds_a_revocation_made_elsewhere(self, services, monkeypatch):
        now = [1000.0]
        monkeypatch.setattr(keys_uc, "monotonic", lambda: now[0])
        created = create(services)
        assert keys_uc.verify_key(services, created.key, cache_seconds=30) is not None
        record = services.store.get_record(ApiKey, KEYS_SCOPE, created.id)
        services.store.put_record(record.model_copy(update={"revoked_at": T0}))
        now[0] += 29
        assert keys_uc.verify_key(services, created.key, cache_seconds=30) is not None
        now[0] += 1
        assert keys_uc.verify_key(services, created.key, cache_seconds=30) is None

    def test_revoking_here_drops_the_cached_record(self, services):
        created = create(services)
        assert keys_uc.verify_key(services, created.key, cache_seconds=30) is not None
        keys_uc.revoke_key(services, created.id)
        assert keys_uc.verify_key(services, created.key, cache_seconds=30) is None

    def test_cached_record_still_checks_the_hash(self, services):
        created = create(services)
        keys_uc.verify_key(services, created.key, cache_seconds=30)
        forged = f"ak_{created.id}_{'x' * 43}"
        assert keys_uc.verify_key(services, forged, cache_seconds=30) is None

    def test_uses_are_noted_without_touching_the_key_record(self, services, clock):
        created = create(services)
        before = services.store.get_record(ApiKey, KEYS_SCOPE, created.id)
        keys_uc.verify_key(services, created.key)
        use = services.store.get_record(ApiKeyUse, KEYS_SCOPE, created.id)
        assert use.last_used_at == T0
        assert services.store.get_record(ApiKey, KEYS_SCOPE, created.id) == before

    def test_a_failed_use_note_does_not_refuse_the_key(self, services, monkeypatch):
        created = create(services)
        real = services.store.put_record

        def failing(record):
            if isinstance(record, ApiKeyUse):
                raise RuntimeError("throttled")
            real(record)

        monkeypatch.setattr(services.store, "put_record", failing)
        assert keys_uc.verify_key(services, created.key) is not None


class TestListAndRevoke:
    def test_list_never_shows_keys_or_hashes(self, services, clock):
        a = create(services, spaces=["a"], label="reader")
        b = create(services, spaces="*", access="write", label="writer")
        keys_uc.verify_key(services, a.key)
        keys_uc.revoke_key(services, b.id)
        listed = keys_uc.list_keys(services).model_dump(mode="json")
        text = json.dumps(listed)
        for created in (a, b):
            assert created.key not in text
            assert created.key.split("_", 2)[2] not in text
            assert hashlib.sha256(created.key.encode()).hexdigest() not in text
        by_id = {k["id"]: k for k in listed["keys"]}
        assert by_id[a.id] == {
            "id": a.id, "label": "reader", "access": "read", "spaces": ["a"],
            "created_at": T0.isoformat(), "last_used_at": T0.isoformat(),
            "revoked": False, "revoked_at": None}
        assert by_id[b.id]["spaces"] == "*" and by_id[b.id]["revoked"] is True
        assert by_id[b.id]["last_used_at"] is None

    def test_revoke_unknown_is_404(self, services):
        with pytest.raises(NotFound):
            keys_uc.revoke_key(services, "0123456789abcdef")
        with pytest.raises(NotFound):
            keys_uc.revoke_key(services, "../etc")

    def test_revoking_twice_keeps_the_first_time(self, services, clock):
        created = create(services)
        first = keys_uc.revoke_key(services, created.id).revoked_at
        clock.now = T0.replace(hour=23)
        assert keys_uc.revoke_key(services, created.id).revoked_at == first


class TestSpaces:
    def test_admin_sees_spaces_with_sessions_or_saved_events(self, services, put):
        put("c1", [(1, "user", "小明", "你好")], space="chat")
        events_uc.save_event(services, "notes", SaveEventRequest(summary="买牛奶"))  # noted
        out = keys_uc.visible_spaces(services, BOOTSTRAP_ADMIN)
        assert out.spaces == ["chat", "notes"] and out.all_spaces

    def test_scoped_key_sees_its_list(self, services, put):
        put("c1", [(1, "user", "小明", "你好")], space="chat")
        scope = KeyScope(access="read", spaces=frozenset({"b", "a"}))
        out = keys_uc.visible_spaces(services, scope)
        assert out.spaces == ["a", "b"] and not out.all_spaces and out.access == "read"

    def test_unrestricted_key_sees_every_space(self, services, put):
        put("c1", [(1, "user", "小明", "你好")], space="chat")
        out = keys_uc.visible_spaces(services, KeyScope(access="read"))
        assert out.spaces == ["chat"] and out.all_spaces


class TestAuthDecisions:
    @pytest.mark.parametrize("method,path,access", [
        ("GET", "/v1/spaces/{space}/events", "read"),
        ("HEAD", "/v1/spaces/{space}/events", "read"),
        ("POST", "/v1/spaces/{space}/recall", "read"),
        ("GET", "/v1/spaces", "read"),
        ("PUT", "/v1/spaces/{space}/sessions/{session}/messages", "write"),
        ("POST", "/v1/spaces/{space}/events", "write"),
        ("POST", "/v1/spaces/{space}/deliveries", "write"),
        ("DELETE", "/v1/spaces/{space}/events/{event_id}", "write"),
        ("GET", "/v1/keys", "admin"),
        ("POST", "/v1/keys", "admin"),
        ("DELETE", "/v1/keys/{key_id}", "admin"),
    ])
    def test_required_access(self, method, path, access):
        assert required_access(method, path) == access

    def test_bootstrap_key_is_admin(self, services):
        assert identify(services, bearer(API_KEY)) == BOOTSTRAP_ADMIN

    @pytest.mark.parametrize("header", [None, "", "Basic x", "Bearer nope",
                                        "Bearer ak_0123456789abcdef_x"])
    def test_unknown_is_401(self, services, header):
        with pytest.raises(Unauthorized):
            identify(services, header)

    def test_scoped_decisions(self, services):
        created = create(services, spaces=["a"], access="read")
        header = bearer(created.key)
        assert authorize(services, "GET", "/v1/spaces/{space}/events", {"space": "a"}, header)
        with pytest.raises(Forbidden, match="may only read") as err:
            authorize(services, "PUT", "/v1/spaces/{space}/sessions/{session}/messages",
                      {"space": "a", "session": "s"}, header)
        assert err.value.status == 403 and err.value.code == "forbidden"
        with pytest.raises(Forbidden, match="space 'b'"):
            authorize(services, "GET", "/v1/spaces/{space}/events", {"space": "b"}, header)
        with pytest.raises(Forbidden, match="admin"):
            authorize(services, "GET", "/v1/keys", None, header)

    def test_created_admin_keys_manage_keys(self, services):
        created = create(services, spaces=None, access="admin")
        scope = authorize(services, "POST", "/v1/keys", None, bearer(created.key))
        assert scope.admin and scope.key_id == created.id


class TestCli:
    @pytest.fixture
    def env(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)  # no stray .env
        monkeypatch.setenv("ANNALS_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setenv("ANNALS_EMBEDDER", "hash")
        monkeypatch.setenv("ANNALS_API_KEY", API_KEY)
        return tmp_path

    def run(self, *args):
        from chalicelib.cli import main

        result = CliRunner().invoke(main, ["keys", *args])
        return result

    def test_round_trip(self, env):
        from chalicelib.config import Settings
        from chalicelib.wiring import build_services

        made = self.run("create", "--space", "a", "--space", "b", "--access", "write",
                        "--label", "laptop")
        assert made.exit_code == 0, made.output
        created = json.loads(made.stdout)
        assert created["key"].startswith(f"ak_{created['id']}_")
        assert created["spaces"] == ["a", "b"] and created["access"] == "write"
        assert "shown this once" in made.stderr

        listed = self.run("list")
        assert listed.exit_code == 0
        assert created["key"] not in listed.output
        rows = json.loads(listed.stdout)["keys"]
        assert [(r["id"], r["label"], r["revoked"]) for r in rows] == [
            (created["id"], "laptop", False)]

        services = build_services(Settings(), index="inline")  # what the server would read
        assert keys_uc.verify_key(services, created["key"]).spaces == frozenset({"a", "b"})

        revoked = self.run("revoke", created["id"])
        assert revoked.exit_code == 0 and json.loads(revoked.stdout)["revoked"] is True
        assert keys_uc.verify_key(services, created["key"]) is None
        assert json.loads(self.run("list").stdout)["keys"][0]["revoked"] is True

    def test_admin_and_all_spaces(self, env):
        admin = json.loads(self.run("create", "--admin", "--label", "rotated").stdout)
        assert admin["access"] == "admin" and admin["spaces"] == "*"
        everything = json.loads(self.run("create", "--all-spaces").stdout)
        assert everything["access"] == "read" and everything["spaces"] == "*"

    @pytest.mark.parametrize("args", [
        (), ("--space", "a", "--all-spaces"), ("--admin", "--space", "a"),
        ("--space", "bad/space"), ("--space", "a", "--access", "admin"),
    ])
    def test_usage_errors(self, env, args):
        result = self.run("create", *args)
        assert result.exit_code == 2, result.output

    def test_revoke_unknown(self, env):
        result = self.run("revoke", "0123456789abcdef")
        assert result.exit_code == 1 and "no API key" in result.output
