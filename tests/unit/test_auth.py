"""chalicelib.api.auth: which API key is in force, and the bearer check."""

from __future__ import annotations

import stat

import pytest

from chalicelib.api.auth import check_bearer, resolve_api_key
from chalicelib.config import Settings
from chalicelib.domain.errors import Unauthorized


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.delenv("ANNALS_API_KEY", raising=False)
    return Settings(data_dir=tmp_path / "data", _env_file=None)


class TestResolveKey:
    def test_env_key_wins_and_nothing_is_written(self, tmp_path, monkeypatch):
        monkeypatch.setenv("ANNALS_API_KEY", "from-env")
        settings = Settings(data_dir=tmp_path / "data", _env_file=None)
        settings.key_path.parent.mkdir(parents=True)
        settings.key_path.write_text("from-file\n")
        assert resolve_api_key(settings) == "from-env"
        assert settings.key_path.read_text() == "from-file\n"

    def test_env_key_without_a_data_dir_creates_nothing(self, tmp_path, monkeypatch):
        monkeypatch.setenv("ANNALS_API_KEY", "from-env")
        settings = Settings(data_dir=tmp_path / "data", _env_file=None)
        assert resolve_api_key(settings) == "from-env"
        assert not settings.key_path.exists()

    def test_generated_key_is_persisted_owner_only_and_reused(self, settings, capsys):
        key = resolve_api_key(settings)
        assert key.startswith("ak_") and len(key) > 40
        assert settings.key_path.read_text() == key + "\n"
        assert stat.S_IMODE(settings.key_path.stat().st_mode) == 0o600
        assert key in capsys.readouterr().err  # announced once so the operator can copy it

        assert resolve_api_key(settings) == key
        assert key not in capsys.readouterr().err  # not printed again

    def test_generated_keys_differ_between_data_dirs(self, tmp_path, monkeypatch):
        monkeypatch.delenv("ANNALS_API_KEY", raising=False)
        a = resolve_api_key(Settings(data_dir=tmp_path / "a", _env_file=None), announce=False)
        b = resolve_api_key(Settings(data_dir=tmp_path / "b", _env_file=None), announce=False)
        assert a != b

    def test_existing_key_file_is_used_stripped(self, settings):
        settings.key_path.parent.mkdir(parents=True)
        settings.key_path.write_text("  my-own-key \n")
        assert resolve_api_key(settings) == "my-own-key"

    def test_empty_key_file_does_not_yield_an_empty_key(self, settings):
        settings.key_path.parent.mkdir(parents=True)
        settings.key_path.write_text("")
        assert resolve_api_key(settings, announce=False) != ""

    def test_quiet_generation(self, settings, capsys):
        resolve_api_key(settings, announce=False)
        assert capsys.readouterr().err == ""


class TestCheckBearer:
    KEY = "ak_secret"

    @pytest.mark.parametrize("header", [
        "Bearer ak_secret", "bearer ak_secret", "BEARER ak_secret", "Bearer  ak_secret ",
    ])
    def test_accepts_the_key(self, header):
        check_bearer(header, self.KEY)  # no exception

    @pytest.mark.parametrize("header", [
        None, "", "ak_secret", "Bearer", "Bearer ", "Bearer    ", "Basic ak_secret",
        "Token ak_secret", "Bearer ak_secreT", "Bearer ak_secret2", "Bearer ak_secre",
        "Bearer ak_secret extra", "Bearerak_secret",
    ])
    def test_rejects_missing_malformed_and_wrong(self, header):
        with pytest.raises(Unauthorized) as err:
            check_bearer(header, self.KEY)
        assert err.value.status == 401
        assert err.value.body()["error"]["code"] == "unauthorized"

    def test_non_ascii_token_is_rejected_not_crashing(self):
        with pytest.raises(Unauthorized):
            check_bearer("Bearer 密钥", self.KEY)

    def test_messages_say_what_is_wrong(self):
        with pytest.raises(Unauthorized, match="missing"):
            check_bearer(None, self.KEY)
        with pytest.raises(Unauthorized, match="Bearer <key>"):
            check_bearer("Basic abc", self.KEY)
        with pytest.raises(Unauthorized, match="invalid API key"):
            check_bearer("Bearer nope", self.KEY)
