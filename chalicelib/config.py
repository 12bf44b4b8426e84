"""Settings from the environment (and `.env` in local mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ANNALS_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    data_dir: Path = Field(default=Path(".annals"), description="where embedded stores live")
    backend: Literal["local", "aws"] = "local"
    embedder: Literal["e5-local", "hash"] = "e5-local"
    llm: Literal["none", "openai", "bedrock"] = "none"
    api_key: str | None = Field(default=None, repr=False)
    schedule: Literal["on", "off"] = "on"
    tz: str | None = Field(default=None, description="IANA zone; default: the message's offset")

    # extraction / quiet window
    quiet_minutes: float = 20.0
    min_reply_packs: int = 5
    max_wait_hours: float = 6.0
    sweep_seconds: float = 60.0

    # recall
    max_cards: int = 2
    min_score: float = 0.0
    expand_factor: float = 3.0
    max_expansions: int = 2
    time_max_results: int = 3
    cooldown_recalls: int = 3
    cooldown_minutes: float = 30.0
    recipe: str = "hybrid_rrf"

    # export
    highlight_threshold: int = 7

    @property
    def db_path(self) -> Path:
        return self.data_dir / "annals.db"

    @property
    def key_path(self) -> Path:
        return self.data_dir / "api_key"
