"""`annals deploy`: deploy (or update) one user's stack `Annals-<user>` with the CDK app in
`infra/`, or only synthesise its CloudFormation template (`--synth-only`, offline, no AWS
credentials needed).

Needs a source checkout (infra/ next to chalicelib/) and the `infra` extra
(`pip install -e '.[infra]'`: aws-cdk-lib, cdk-nag). A real deploy also needs AWS
credentials and the AWS CDK CLI: `cdk` on PATH, else `npx --yes aws-cdk@2` (Node.js).
Nothing here is imported by the Lambda functions.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import click

REPO = Path(__file__).resolve().parent.parent
INFRA = REPO / "infra"
CDK_NPX = ["npx", "--yes", "aws-cdk@2"]
BOOTSTRAP_PARAMETER = "/cdk-bootstrap/hnb659fds/version"  # the default synthesizer's qualifier


@functools.cache
def _infra_settings() -> ModuleType:
    """infra/annals_infra/settings.py (plain Python: user name rules, endpoint parsing)."""
    name = "_annals_infra_settings"
    path = INFRA / "annals_infra" / "settings.py"
    if not path.is_file():
        raise click.ClickException(
            f"{INFRA} not found: `annals deploy` runs from a source checkout of Annals")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


def _check_user(ctx: click.Context, param: click.Parameter, value: str) -> str:
    problem = _infra_settings().user_error(value)
    if problem:
        raise click.BadParameter(f"{value!r}: {problem}")
    return value


def _default_region() -> str:
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        try:
            import boto3

            region = boto3.session.Session().region_name
        except Exception:  # a broken local config is not our problem here
            region = None
    return region or _infra_settings().DEFAULT_REGION


def _child_env(region: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "AWS_DEFAULT_REGION": region,
        "AWS_REGION": region,
        "AWS_EC2_METADATA_DISABLED": "true",  # Chalice packaging must not probe EC2 metadata
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20",
        "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
    })
    env.update(extra)
    return env


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> int:
    """Run `cmd`, streaming its output to stderr line by line; returns the exit code."""
    click.echo(f"$ {' '.join(cmd)}", err=True)
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)
    except FileNotFoundError as err:
        raise click.ClickException(f"cannot run {cmd[0]}: {err}") from None
    assert proc.stdout is not None
    for line in proc.stdout:
        click.echo(line.rstrip("\n"), err=True)
    return proc.wait()


def _need_cdk_lib() -> None:
    missing = [m for m in ("aws_cdk", "cdk_nag", "constructs") if not importlib.util.find_spec(m)]
    if missing:
        raise click.ClickException(
            f"missing {', '.join(missing)}: install the infra extra "
            "(pip install -e '.[infra]')")
    if not shutil.which("node"):
        raise click.ClickException("aws-cdk-lib needs Node.js (node on PATH)")


def _context(user: str, region: str, endpoint: str | None, service: str | None,
             source_dir: Path | None) -> dict[str, str]:
    ctx = {"user": user, "region": region}
    if endpoint:
        ctx["opensearch_endpoint"] = endpoint
    if service:
        ctx["opensearch_service"] = service
    if source_dir:
        ctx["source_dir"] = str(source_dir.resolve())
    return ctx


def synth(ctx: dict[str, str], out: Path) -> Path:
    """Synthesise the stack into `out` (a cloud assembly); returns the template's path."""
    _need_cdk_lib()
    out.mkdir(parents=True, exist_ok=True)
    env = _child_env(ctx["region"], CDK_OUTDIR=str(out), CDK_CONTEXT_JSON=json.dumps(ctx))
    env.pop("CDK_DEFAULT_ACCOUNT", None)  # offline: account-agnostic template
    code = _run([sys.executable, str(INFRA / "app.py")], env, cwd=out)
    template = out / f"Annals-{ctx['user']}.template.json"
    if code != 0 or not template.is_file():
        raise click.ClickException(f"synthesis failed (exit {code}); see the output above")
    return template


def caller_identity(region: str) -> dict[str, Any]:
    """STS GetCallerIdentity, or a ClickException saying how to provide credentials."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

    try:
        return boto3.client("sts", region_name=region).get_caller_identity()
    except NoCredentialsError:
        raise click.ClickException(
            "no AWS credentials found. Configure them first (aws configure, "
            "aws sso login, AWS_PROFILE, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY), "
            "or use --synth-only to write the template without deploying.") from None
    except (ClientError, BotoCoreError) as err:
        raise click.ClickException(f"AWS credentials did not work: {err}") from None


def _cdk_cli() -> list[str]:
    if shutil.which("cdk"):
        return ["cdk"]
    if shutil.which("npx"):
        return CDK_NPX
    raise click.ClickException(
        "the AWS CDK CLI is needed: install Node.js (npx fetches aws-cdk) or "
        "`npm install -g aws-cdk`")


def _bootstrapped(region: str) -> bool:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        boto3.client("ssm", region_name=region).get_parameter(Name=BOOTSTRAP_PARAMETER)
        return True
    except (ClientError, BotoCoreError):
        return False


def _cli_context_args(ctx: dict[str, str]) -> list[str]:
    args: list[str] = []
    for key, value in ctx.items():
        args += ["-c", f"{key}={value}"]
    return args


def run_deploy(ctx: dict[str, str], out: Path) -> dict[str, str]:
    """`cdk deploy` the stack; returns its outputs."""
    region, user = ctx["region"], ctx["user"]
    identity = caller_identity(region)
    account = identity["Account"]
    click.echo(f"Deploying Annals-{user} to account {account}, region {region} "
               f"as {identity.get('Arn', '?')}", err=True)
    source = Path(ctx.get("source_dir") or REPO)
    if not (source / "requirements.txt").is_file():
        raise click.ClickException(
            f"{source / 'requirements.txt'} is missing. Chalice puts only the packages listed "
            "there into the Lambda bundle; without it the functions cannot import their "
            "dependencies. Add it (the runtime dependencies of pyproject.toml, without boto3) "
            "and run again.")
    _need_cdk_lib()
    cli = _cdk_cli()
    env = _child_env(region, CDK_DEFAULT_ACCOUNT=account, CDK_DEFAULT_REGION=region)
    app = f"{_quote(sys.executable)} {_quote(str(INFRA / 'app.py'))}"
    out.mkdir(parents=True, exist_ok=True)
    common = ["--app", app, "--output", str(out), *_cli_context_args(ctx)]
    if not _bootstrapped(region):
        click.echo(f"Bootstrapping CDK in aws://{account}/{region} (once per account/region)",
                   err=True)
        # run outside infra/ so the CLI does not synthesise the app just to bootstrap
        if _run([*cli, "bootstrap", f"aws://{account}/{region}"], env, out):
            raise click.ClickException("cdk bootstrap failed; see the output above")
    outputs_file = out / "outputs.json"
    code = _run([*cli, "deploy", f"Annals-{user}", *common, "--require-approval", "never",
                 "--progress", "events", "--outputs-file", str(outputs_file)], env, INFRA)
    if code != 0:
        raise click.ClickException("cdk deploy failed; see the output above")
    return json.loads(outputs_file.read_text()).get(f"Annals-{user}", {})


def _quote(text: str) -> str:
    return f'"{text}"' if " " in text else text


def report(outputs: dict[str, str], region: str) -> None:
    url = outputs.get("ApiUrl") or outputs.get("EndpointURL") or "(no API output)"
    arn = outputs.get("ApiKeySecretArn", "?")
    click.echo(f"API URL:      {url}")
    click.echo(f"API key:      Secrets Manager secret {outputs.get('ApiKeySecretName', '?')}")
    click.echo(f"              {arn}")
    click.echo("Read the key: aws secretsmanager get-secret-value --region "
               f"{region} --secret-id {arn} --query SecretString --output text")
    click.echo(f"Try it:       curl -s {url.rstrip('/')}/v1/health")


@click.command(help="Deploy (or update) one user's Annals stack on AWS.")
@click.option("--user", required=True, callback=_check_user,
              help="user name: lowercase letters, digits and hyphens, at most 20")
@click.option("--region", help="AWS region (default: AWS_REGION, your AWS config, us-east-1)")
@click.option("--opensearch-endpoint",
              help="use this existing OpenSearch domain or Serverless collection "
                   "(index annals-<user>); default: create a small domain for the user")
@click.option("--opensearch-service", type=click.Choice(["es", "aoss"]),
              help="es = managed domain, aoss = Serverless (default: from the endpoint)")
@click.option("--synth-only", is_flag=True,
              help="only write the CloudFormation template (offline, no credentials)")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="directory for the cloud assembly (default: a new temp directory)")
@click.option("--source-dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              hidden=True, help="Chalice project to package (default: the repo root)")
@click.option("--cors-origin", envvar="ANNALS_CORS_ORIGINS", show_envvar=True, default=None,
              help="the one browser origin the API answers CORS for (e.g. the SillyTavern "
                   "extension's http://127.0.0.1:8000); default: none")
def deploy(user: str, region: str | None, opensearch_endpoint: str | None,
           opensearch_service: str | None, synth_only: bool, out: Path | None,
           source_dir: Path | None, cors_origin: str | None) -> None:
    from chalicelib.api.cors import one_origin

    try:
        cors_origin = one_origin(cors_origin)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--cors-origin") from None
    region = region or _default_region()
    if opensearch_endpoint:
        try:
            target = _infra_settings().parse_endpoint(opensearch_endpoint, opensearch_service)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--opensearch-endpoint") from None
        if target.region and target.region != region:
            raise click.BadParameter(
                f"the endpoint is in {target.region}; deploy with --region {target.region}",
                param_hint="--opensearch-endpoint")
    elif opensearch_service == "aoss":
        raise click.BadParameter("a Serverless collection needs --opensearch-endpoint",
                                 param_hint="--opensearch-service")
    ctx = _context(user, region, opensearch_endpoint, opensearch_service, source_dir)
    if cors_origin:
        ctx["cors_origin"] = cors_origin
    out = (out or Path(tempfile.mkdtemp(prefix=f"annals-{user}-"))).resolve()
    if synth_only:
        click.echo(str(synth(ctx, out)))
        return
    report(run_deploy(ctx, out), region)


if __name__ == "__main__":
    deploy()
