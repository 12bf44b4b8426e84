"""The `annals` command."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from chalicelib.config import Settings


def _services():
    from chalicelib.wiring import build_services

    return build_services(Settings())


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        now = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"not an ISO-8601 time: {value!r}") from None
    if now.tzinfo is None:
        raise click.BadParameter("--now needs an offset, e.g. 2026-10-28T10:30:00+08:00")
    return now


def _echo_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


@click.group(help="Annals: long-term memory for AI chat.")
@click.version_option(package_name="annals")
def main() -> None:
    pass


@main.command(help="Serve the API locally on embedded stores, with the scheduler in-process.")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
def serve(host: str, port: int) -> None:
    from chalicelib.local.server import serve as run

    run(host, port)


@main.command(help="Resolve the time named in TEXT and print it as JSON.")
@click.argument("text")
@click.option("--now", "now_", help="reference time, ISO-8601 with offset (default: now)")
@click.option("--tz", help="IANA time zone for calendar arithmetic, e.g. Asia/Shanghai")
def when(text: str, now_: str | None, tz: str | None) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from chalicelib.domain.timeparse import when_json

    now = _parse_now(now_)
    try:
        zone = ZoneInfo(tz) if tz else None
    except (ZoneInfoNotFoundError, ValueError):
        raise click.BadParameter(f"unknown time zone {tz!r}", param_hint="--tz") from None
    if now is None:
        now = datetime.now(zone or UTC)
    click.echo(json.dumps(when_json(text, now, zone), ensure_ascii=False))


@main.command(help="Extract events from pending messages now.")
@click.option("--space", required=True)
@click.option("--session", default=None)
def extract(space: str, session: str | None) -> None:
    from chalicelib.usecases.extract import run_extraction

    events = run_extraction(_services(), space, session)
    _echo_json({"events": [e.model_dump(mode="json") for e in events]})


@main.command("import", help="Import chat history from FILE: OpenAI-style messages JSON, "
              "a SillyTavern .jsonl chat, or a LoCoMo conversation.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--space", required=True)
@click.option("--format", "fmt", type=click.Choice(["auto", "openai", "sillytavern", "locomo"]),
              default="auto", show_default=True)
@click.option("--session", default=None, help="session name (default: the file name)")
@click.option("--start", "start_", default=None,
              help="time of the first message when the file has none (ISO-8601 with offset)")
@click.option("--tz", default=None, help="IANA zone for times written without one")
@click.option("--extract/--no-extract", "extract_now", default=False,
              help="extract events right away instead of waiting for the quiet window")
def import_(file: Path, space: str, fmt: str, session: str | None, start_: str | None,
            tz: str | None, extract_now: bool) -> None:
    from zoneinfo import ZoneInfo

    from pydantic import ValidationError

    from chalicelib.domain.models import PutMessagesRequest, check_id
    from chalicelib.usecases import importing as importers
    from chalicelib.usecases.ingest import put_messages

    zone = ZoneInfo(tz) if tz else UTC
    start = _parse_now(start_) or datetime.now(zone)
    try:
        check_id(space, "space")
        sessions = importers.read_file(file, fmt, session, start, zone)
    except (importers.ImportFormatError, ValueError) as exc:
        raise click.ClickException(f"{file}: {exc}") from None
    services = _services()
    report = []
    with click.progressbar(sessions, label="importing", file=sys.stderr) as bar:
        for imported in bar:
            totals = {"session": imported.session, "accepted": 0, "unchanged": 0, "changed": 0}
            for batch in importers.batches(imported.messages):
                try:
                    out = put_messages(services, space, imported.session,
                                       PutMessagesRequest(messages=batch))
                except ValidationError as exc:
                    raise click.ClickException(f"session {imported.session}: {exc}") from None
                for key in ("accepted", "unchanged", "changed"):
                    totals[key] += getattr(out, key)
            report.append(totals)
    events = 0
    if extract_now:
        from chalicelib.usecases.extract import run_extraction

        events = len(run_extraction(services, space))
    _echo_json({"space": space, "sessions": report, "events_extracted": events})


@main.command(help="Recall memories for QUERY.")
@click.argument("query")
@click.option("--space", required=True)
@click.option("--now", "now_", help="reference time, ISO-8601 with offset")
@click.option("--max-cards", type=int, default=None)
@click.option("--time-hint", default=None)
@click.option("--window", default=None, help="chat window id (cooldown)")
@click.option("--format", "fmt", type=click.Choice(["blocks", "timeline", "compact"]),
              default="blocks", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="print the whole response as JSON")
def recall(query: str, space: str, now_: str | None, max_cards: int | None,
           time_hint: str | None, window: str | None, fmt: str, as_json: bool) -> None:
    from chalicelib.domain.models import RecallRequest
    from chalicelib.usecases.recall import recall as run

    req = RecallRequest(query=query, now=_parse_now(now_), max_cards=max_cards,
                        time_hint=time_hint, window=window, format=fmt)
    result = run(_services(), space, req)
    if as_json:
        _echo_json(result.model_dump(mode="json"))
        return
    for line in result.trace:
        click.echo(line, err=True)
    click.echo(result.context or "(nothing recalled)")


@main.command(help="Export the chronicle as Markdown (default) or JSON.")
@click.option("--space", required=True)
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown")
def export(space: str, fmt: str) -> None:
    from chalicelib.usecases import export as exp
    services = _services()
    if fmt == "json":
        _echo_json({"space": space, "events": exp.export_json(services, space)})
    else:
        click.echo(exp.export_markdown(services, space, services.settings.highlight_threshold))


@main.group(help="Scheduled jobs.")
def jobs() -> None:
    pass


@jobs.command("run", help="Run one scheduled job once (e.g. quiet-window).")
@click.argument("name")
@click.option("--now", "now_", help="pretend it is this time, ISO-8601 with offset")
def jobs_run(name: str, now_: str | None) -> None:
    from chalicelib.usecases.jobs import JOBS, run_job

    if name not in JOBS:
        raise click.BadParameter(f"unknown job {name!r}; known: {', '.join(sorted(JOBS))}")
    _echo_json(run_job(name, _services(), _parse_now(now_)).as_dict())


def _add_deploy() -> None:
    from chalicelib.deploy import deploy

    main.add_command(deploy)


def _add_bench() -> None:
    try:
        from bench.cli import bench
    except ImportError:  # bench/ ships with the source tree, not every install
        return
    main.add_command(bench)


_add_bench()
_add_deploy()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
