"""Stack settings: user name rules, OpenSearch endpoint parsing, names derived from the user.

Plain Python on purpose: no aws-cdk-lib import, so it is cheap to test and reuse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal
from urllib.parse import urlsplit

# Lowercase letters, digits and hyphens; 1-20 characters; starts and ends with a letter or
# digit. Keeps every derived name valid: stack "Annals-<user>", OpenSearch domain and index
# "annals-<user>" (domain names are at most 28 characters).
USER_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,18}[a-z0-9])?$")
MAX_USER_LEN = 20

# The queue name the Chalice app names in `@app.on_sqs_message(queue=...)`. Chalice turns it
# into a hard-coded ARN; the stack rewrites it to its own (per-user) queue.
APP_QUEUE_NAME = "annals-extract"

LAMBDA_TIMEOUT_S = 60
LAMBDA_MEMORY_MB = 1024
# AWS: the source queue's visibility timeout should be at least 6x the function timeout.
VISIBILITY_TIMEOUT_S = 6 * LAMBDA_TIMEOUT_S
MAX_RECEIVE_COUNT = 5
LOG_RETENTION_DAYS = 30
DEFAULT_REGION = "us-east-1"

Service = Literal["es", "aoss"]


def user_error(user: str) -> str | None:
    """Why `user` is not a valid user name, or None when it is."""
    if not user:
        return "the user name is empty"
    if len(user) > MAX_USER_LEN:
        return f"the user name is longer than {MAX_USER_LEN} characters"
    if not USER_RE.match(user):
        return ("the user name may contain only lowercase letters, digits and hyphens, "
                "and must start and end with a letter or digit")
    return None


def origin_error(origin: str) -> str | None:
    """Why `origin` is not one browser origin (scheme://host[:port], no path), or None."""
    url = urlsplit(origin)
    if url.scheme not in ("http", "https") or not url.netloc or url.path not in ("", "/") \
            or url.query or url.fragment or "," in origin or " " in origin:
        return f"{origin!r} is not one origin such as http://127.0.0.1:8000"
    return None


def stack_name(user: str) -> str:
    return f"Annals-{user}"


def index_name(user: str) -> str:
    return f"annals-{user}"


def domain_name(user: str) -> str:
    return f"annals-{user}"


@dataclass(frozen=True)
class SearchTarget:
    """An existing OpenSearch endpoint the stack points the app at."""

    endpoint: str  # https://host
    service: Service
    region: str | None  # parsed from the host when it is an AWS endpoint
    resource_name: str | None  # domain name (es) or collection id (aoss), when parseable


_ES_HOST = re.compile(
    r"^(?:search|vpc)-(?P<name>[a-z][a-z0-9-]{2,27})-[a-z0-9]+\.(?P<region>[a-z0-9-]+)"
    r"\.es\.amazonaws\.com$")
_AOSS_HOST = re.compile(r"^(?P<id>[a-z0-9]+)\.(?P<region>[a-z0-9-]+)\.aoss\.amazonaws\.com$")


def parse_endpoint(endpoint: str, service: Service | None = None) -> SearchTarget:
    """Parse an OpenSearch endpoint URL (a managed domain or a Serverless collection).

    `service` defaults to "aoss" for *.aoss.amazonaws.com hosts and "es" otherwise. Raises
    ValueError for something that is not an https URL, or an AWS host whose kind contradicts
    `service`.
    """
    url = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
    if url.scheme != "https" or not url.hostname:
        raise ValueError(f"not an https OpenSearch endpoint: {endpoint!r}")
    host = url.hostname.lower()
    es, aoss = _ES_HOST.match(host), _AOSS_HOST.match(host)
    if service is None:
        service = "aoss" if aoss else "es"
    if service not in ("es", "aoss"):
        raise ValueError("the OpenSearch service must be 'es' or 'aoss'")
    if service == "es" and aoss:
        raise ValueError(f"{host} is a Serverless collection: use --opensearch-service aoss")
    if service == "aoss" and es:
        raise ValueError(f"{host} is a managed domain: use --opensearch-service es")
    match = es if service == "es" else aoss
    if match is None:
        raise ValueError(
            f"cannot tell the {'domain name' if service == 'es' else 'collection id'} from "
            f"{host!r}; use the endpoint AWS shows for the "
            f"{'domain' if service == 'es' else 'collection'} (not a custom domain name)")
    name = match.group("name") if service == "es" else match.group("id")
    return SearchTarget(endpoint=f"https://{host}", service=service,
                        region=match.group("region"), resource_name=name)


# ---------------------------------------------------------------------- limits (issue 23)
#
# What one user's stack admits (docs/aws.md "Limits and throttling"). API Gateway cannot tell
# Annals keys apart (they are bearer tokens the app checks, not API Gateway API keys), and a
# stack serves one user: these are that user's limits, over all their keys and spaces.

# The routes a bulk importer leans on, each throttled to the `import_*` limits: (method,
# path as Chalice names it). A route the app does not have is skipped.
IMPORT_ROUTES = (
    ("PUT", "/v1/spaces/{space}/sessions/{session}/messages"),
    ("POST", "/v1/spaces/{space}/extract"),
    ("POST", "/v1/spaces/{space}/graph"),
    ("POST", "/v1/spaces/{space}/consolidate"),
)
SQS_MAX_CONCURRENCY = (2, 1000)  # the range AWS allows for ScalingConfig.MaximumConcurrency
ENV_PREFIX = "ANNALS_STACK_"  # ANNALS_STACK_API_RATE_LIMIT=… overrides api_rate_limit


@dataclass(frozen=True)
class Limits:
    """Throttling and reserved concurrency of one user's stack; every field is a CDK context
    key of the same name (`-c api_rate_limit=20`), else ANNALS_STACK_<NAME> in the
    environment, else the default here. A concurrency of 0 reserves nothing."""

    # API Gateway stage default, for every route: requests per second, and at once
    api_rate_limit: float = 50
    api_burst_limit: int = 100
    # the IMPORT_ROUTES, each: PUT …/messages, POST …/extract, …/graph, …/consolidate
    import_rate_limit: float = 2
    import_burst_limit: int = 5
    # ExtractWorker: the SQS event source's MaximumConcurrency and the reserved concurrency
    queue_concurrency: int = 3
    # IndexStream (DynamoDB stream indexer): reserved concurrency
    stream_concurrency: int = 3
    # each scheduled job (quiet-window, merge, cooldown): reserved concurrency; 1 = no overlap
    schedule_concurrency: int = 1
    # APIHandler: none by default. A reservation is also a cap, and a request over it is a
    # Lambda throttle, which API Gateway answers with a 5xx, not a 429 with Retry-After.
    api_concurrency: int = 0

    def problems(self) -> list[str]:
        out = []
        if not 0 < self.api_rate_limit <= 10_000:
            out.append("api_rate_limit must be above 0 and at most 10000 (the account's "
                       "API Gateway limit per region)")
        if not 1 <= self.api_burst_limit <= 5_000:
            out.append("api_burst_limit must be 1 to 5000")
        if not 0 < self.import_rate_limit <= self.api_rate_limit:
            out.append("import_rate_limit must be above 0 and at most api_rate_limit")
        if not 1 <= self.import_burst_limit <= self.api_burst_limit:
            out.append("import_burst_limit must be 1 to api_burst_limit")
        low, high = SQS_MAX_CONCURRENCY
        if self.queue_concurrency != 0 and not low <= self.queue_concurrency <= high:
            out.append(f"queue_concurrency must be 0 (no limit) or {low} to {high} (the "
                       "SQS event source's MaximumConcurrency)")
        for name in ("stream_concurrency", "schedule_concurrency", "api_concurrency"):
            if not 0 <= getattr(self, name) <= 1000:
                out.append(f"{name} must be 0 (no reservation) to 1000")
        return out

    @property
    def retry_after_s(self) -> int:
        """Retry-After of API Gateway's 429: one gateway response serves every route, so the
        time the slowest bucket (the import routes') takes to give back a request."""
        return max(1, math.ceil(1 / self.import_rate_limit))


def limits_from(ctx: Callable[[str], Any], environ: Mapping[str, str]) -> Limits:
    """Limits from CDK context (`ctx(key)`), then ANNALS_STACK_* variables, then defaults.
    Raises ValueError naming the setting that is not a number or out of range."""
    values: dict[str, Any] = {}
    for field in fields(Limits):
        raw = ctx(field.name)
        if raw is None or raw == "":
            raw = environ.get(ENV_PREFIX + field.name.upper()) or None
        if raw is None:
            continue
        kind = float if field.type in (float, "float") else int
        try:
            value = kind(raw)
            if kind is int and isinstance(raw, float) and raw != value:
                raise ValueError
        except (TypeError, ValueError):
            kind_name = "a number" if kind is float else "a whole number"
            raise ValueError(f"{field.name} must be {kind_name}, not {raw!r}") from None
        values[field.name] = value
    limits = Limits(**values)
    problems = limits.problems()
    if problems:
        raise ValueError("; ".join(problems))
    return limits
