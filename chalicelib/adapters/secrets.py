"""Secrets Manager: the admin API key the stack generated, read once per Lambda container."""

from __future__ import annotations

from typing import Any

_cache: dict[str, str] = {}


def read_secret(secret_id: str, *, region: str | None = None, client: Any = None) -> str:
    """The secret's string value, stripped; cached per container (a rotation takes effect
    on the next cold start)."""
    if secret_id not in _cache:
        if client is None:
            import boto3

            client = boto3.client("secretsmanager", region_name=region)
        _cache[secret_id] = client.get_secret_value(SecretId=secret_id)["SecretString"].strip()
    return _cache[secret_id]


STAGES = ("AWSCURRENT", "AWSPREVIOUS")
_stage_cache: dict[str, tuple[float, tuple[str, ...]]] = {}


def read_secret_stages(secret_id: str, *, region: str | None = None, client: Any = None,
                       max_age: float = 30.0, stages: tuple[str, ...] = STAGES) -> tuple[str, ...]:
    """The secret's values at `stages` that exist (AWSCURRENT, then AWSPREVIOUS), stripped,
    re-read once they are `max_age` seconds old: a rotation reaches a warm container within
    that bound, and clients holding the previous value keep working meanwhile."""
    import time

    hit = _stage_cache.get(secret_id)
    if hit is not None and time.monotonic() - hit[0] < max_age:
        return hit[1]
    if client is None:
        import boto3

        client = boto3.client("secretsmanager", region_name=region)
    values: list[str] = []
    for stage in stages:
        try:
            value = client.get_secret_value(SecretId=secret_id, VersionStage=stage)
        except client.exceptions.ResourceNotFoundException:
            if stage == stages[0]:
                raise
            continue  # no previous version yet
        text = (value.get("SecretString") or "").strip()
        if text and text not in values:
            values.append(text)
    _stage_cache[secret_id] = (time.monotonic(), tuple(values))
    return tuple(values)
