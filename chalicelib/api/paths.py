"""Paths the request plumbing tells apart before any route runs (chalicelib.api.auth,
chalicelib.api.admission) and the chat gateway's routes (chalicelib.api.gateway). Plain
constants in a module of their own, so the door never imports what stands behind it: a
cold start that serves a recall does not load the chat gateway."""

from __future__ import annotations

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
GATEWAY_PATHS = frozenset({CHAT_PATH, MODELS_PATH})
