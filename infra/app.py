#!/usr/bin/env python3
"""CDK entry point: synthesises the stack `Annals-<user>`.

Context (from `cdk … -c key=value`, or CDK_CONTEXT_JSON when run as `python infra/app.py`):
  user                 required; lowercase letters, digits, hyphens, at most 20 characters
  region               default: CDK_DEFAULT_REGION, AWS_REGION, AWS_DEFAULT_REGION, us-east-1
  opensearch_endpoint  an existing domain/collection endpoint; omitted: create a domain
  opensearch_service   es | aoss (default: from the endpoint's host name)
  source_dir           the Chalice project to package (default: the repo root)
  lambda_memory        MB (default 1024)
  cors_origin          the one browser origin the API answers CORS for (annals deploy
                       --cors-origin, checked there); default: none
  api_rate_limit, api_burst_limit, import_rate_limit, import_burst_limit,
  queue_concurrency, stream_concurrency, schedule_concurrency, api_concurrency
                       the limits (annals_infra.settings.Limits; docs/aws.md "Limits and
                       throttling"); each also read from ANNALS_STACK_<NAME> in the
                       environment, so `annals deploy` passes them through

The cloud assembly goes to CDK_OUTDIR (set by the cdk CLI, or by `annals deploy
--synth-only`), else a new temp directory; Chalice's packaging scratch (`chalice.out/`) goes
inside it, never into the repo. Packaging needs no AWS credentials: the region is set and
instance-metadata probing is off.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from annals_infra import settings as S  # noqa: E402


class ConfigError(Exception):
    pass


def _region(ctx) -> str:
    return (ctx("region") or os.environ.get("CDK_DEFAULT_REGION") or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION") or S.DEFAULT_REGION)


def build(app, ctx, cwd: Path | None = None) -> object:
    """Add the user's stack to `app`; `ctx(key)` reads context; a relative source_dir is
    taken from `cwd` (the directory the app was started in)."""
    import aws_cdk as cdk
    from annals_infra.stack import AnnalsStack, StackConfig

    user = ctx("user")
    if not user:
        raise ConfigError("missing context 'user' (cdk … -c user=NAME)")
    problem = S.user_error(user)
    if problem:
        raise ConfigError(f"invalid user {user!r}: {problem}")
    region = _region(ctx)
    search = None
    if ctx("opensearch_endpoint"):
        try:
            search = S.parse_endpoint(ctx("opensearch_endpoint"),
                                      ctx("opensearch_service") or None)
        except ValueError as err:
            raise ConfigError(str(err)) from None
        if search.region and search.region != region:
            raise ConfigError(f"the OpenSearch endpoint is in {search.region}, the stack in "
                              f"{region}: deploy with --region {search.region}")
    elif ctx("opensearch_service") not in (None, "", "es"):
        raise ConfigError("a created domain is a managed domain (es); pass "
                          "--opensearch-endpoint to use a Serverless collection")
    try:  # before the ANNALS_* variables are dropped below
        limits = S.limits_from(ctx, os.environ)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    source_dir = ((cwd or Path.cwd()) / (ctx("source_dir") or REPO)).resolve()
    if not (source_dir / "app.py").is_file() or not (source_dir / ".chalice").is_dir():
        raise ConfigError(f"{source_dir} is not a Chalice project (app.py, .chalice/)")

    # The developer's own ANNALS_* settings must not leak into packaging: app.py reads e.g.
    # ANNALS_QUEUE_NAME / ANNALS_TABLE_STREAM_ARN at import time for its decorators, and the
    # stack expects the defaults there (it rewrites those event sources itself).
    for key in [k for k in os.environ if k.startswith("ANNALS_")]:
        del os.environ[key]
    # Chalice packaging resolves ARNs with the region and must not probe EC2 metadata.
    os.environ["AWS_DEFAULT_REGION"] = region
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    env = cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=region)
    cors_origin = ctx("cors_origin") or None
    if cors_origin and (problem := S.origin_error(cors_origin)):
        raise ConfigError(f"cors_origin: {problem}")
    config = StackConfig(user=user, source_dir=source_dir, search=search,
                         lambda_memory_mb=int(ctx("lambda_memory") or S.LAMBDA_MEMORY_MB),
                         limits=limits, cors_origin=cors_origin)
    return AnnalsStack(app, config, env=env)


def main() -> int:
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    import aws_cdk as cdk
    from annals_infra import nag

    started_in = Path.cwd()
    outdir = Path(os.environ.get("CDK_OUTDIR") or tempfile.mkdtemp(prefix="annals-cdk-"))
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    # Chalice writes its packaging scratch to ./chalice.out: keep it inside the assembly dir.
    shutil.rmtree(outdir / "chalice.out", ignore_errors=True)
    os.chdir(outdir)

    app = cdk.App(outdir=str(outdir))
    try:
        build(app, app.node.try_get_context, started_in)
    except ConfigError as err:
        print(f"annals infra: {err}", file=sys.stderr)
        return 2
    nag.add_checks(app)
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
