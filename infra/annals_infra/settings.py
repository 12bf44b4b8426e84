"""Stack settings: user name rules, OpenSearch endpoint parsing, names derived from the user.

Plain Python on purpose: no aws-cdk-lib import, so it is cheap to test and reuse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
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
