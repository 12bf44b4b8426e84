"""CORS for browser hosts (`ANNALS_CORS_ORIGINS`, the SillyTavern extension): what both
servers answer a listed origin with. Locally the WSGI wrapper (chalicelib/local/cors.py)
answers every listed origin; on AWS (ANNALS_BACKEND=aws) Chalice's own CORS does — an
OPTIONS method per route in API Gateway (a mock integration: preflights never reach the
Lambda) and the headers on every answer —, and Chalice's CORSConfig holds one origin, so on
AWS the setting names exactly one (`annals deploy` refuses more)."""

from __future__ import annotations

from collections.abc import Mapping

from chalice import CORSConfig

METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE"
HEADERS = "Authorization, Content-Type, X-Annals-Space, X-Annals-Window"
EXPOSED = "X-Annals-Memory, X-Annals-Cards, X-Annals-Space, X-Annals-Window, Location, Retry-After"
MAX_AGE = 600


def one_origin(value: str | None) -> str | None:
    """The one origin an AWS deployment answers; ValueError for none valid or several."""
    # here, not at the top: app.py imports this module, and the settings' import (pydantic-
    # settings) would double a cold start that needs none of it (`annals bench cold`)
    from chalicelib.config import parse_origins

    origins = parse_origins(value)
    if len(origins) > 1:
        raise ValueError("ANNALS_CORS_ORIGINS: on AWS, one origin (API Gateway answers the "
                         f"preflight itself, with one fixed origin); got {sorted(origins)}")
    return next(iter(origins), None)


def chalice_cors(environ: Mapping[str, str]) -> CORSConfig | None:
    """Chalice's CORS for every route when the app runs on AWS with an origin set; None
    elsewhere (`annals serve` answers CORS in front of the app, for every listed origin)."""
    if environ.get("ANNALS_BACKEND") != "aws" or not environ.get("ANNALS_CORS_ORIGINS"):
        return None
    origin = one_origin(environ.get("ANNALS_CORS_ORIGINS"))
    if origin is None:
        return None
    return CORSConfig(allow_origin=origin, allow_headers=[h.strip() for h in HEADERS.split(",")],
                      expose_headers=[h.strip() for h in EXPOSED.split(",")], max_age=MAX_AGE)
