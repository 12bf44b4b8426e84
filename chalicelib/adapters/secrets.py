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
