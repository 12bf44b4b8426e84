"""The `annals` command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import click

from chalicelib.config import Settings


def _services():
    from chalicelib.wiring import build_services

    return build_services(Settings())


def _parse_now(value: str | None, option: str = "--now") -> datetime | None:
    if value is None:
        return None
    try:
        now = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"not an ISO-8601 time: {value!r}",
                                 param_hint=option) from None
    if now.tzinfo is None:
        raise click.BadParameter(f"{option} needs an offset, e.g. 2026-10-28T10:30:00+08:00")
    return now


def _echo_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


class JobProgress:
    """A background job's progress on stderr while it runs: a progress bar on a terminal,
    else a line each time it moves ("extracting: 125/700 messages, 131 events"). Called with
    the job (a Job record or the API's JobView) whenever it changed."""

    def __init__(self, label: str = "extracting"):
        self.label = label
        self.bar = None
        self.shown = 0
        self.last: tuple | None = None
        self.tty = sys.stderr.isatty()

    def __enter__(self) -> JobProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)

    def __call__(self, job) -> None:
        p = job.progress
        mark = (job.status, p.done, p.total, p.events)
        if mark == self.last:
            return
        self.last = mark
        if not self.tty:
            click.echo(f"{self.label}: {p.done}/{p.total} {p.unit}, {p.events} events "
                       f"({job.status})", err=True)
            return
        if self.bar is None:
            self.bar = click.progressbar(length=max(p.total, 1), label=self.label,
                                         file=sys.stderr, show_pos=True,
                                         item_show_func=lambda item: item)
            self.bar.__enter__()
        self.bar.length = max(p.total, 1)
        self.bar.update(p.done - self.shown, f"{p.events} events")
        self.shown = p.done


def extract_here(services, space: str, session: str | None = None):
    """Extraction on the local data dir as a background job run in this process (listed by
    GET …/jobs like any other), its progress on stderr; the finished job, or exit 1."""
    from chalicelib.usecases import background

    with JobProgress() as progress:
        job = background.run_here(services, space, "extract", {"session": session},
                                  on_progress=progress)
    if job.status != "done":
        raise click.ClickException(f"extraction failed ({job.id}): {job.error}")
    return job


# ------------------------------------------------------------------ a running instance
# With --url (or ANNALS_URL) recall, save, export, import and extract talk to a running Annals
# (`annals serve`, or a deployed stack's ApiUrl) through chalicelib.client; without, they work
# on the local data dir as before.


def remote_options(fn: Callable) -> Callable:
    fn = click.option(
        "--key", envvar="ANNALS_API_KEY", show_envvar=True,
        help="API key for --url (for a loopback URL, default: the data dir's key file)")(fn)
    return click.option(
        "--url", envvar="ANNALS_URL", show_envvar=True,
        help="a running Annals, e.g. http://127.0.0.1:8000 or a deployed stack's ApiUrl "
             "(default: work on the local data dir)")(fn)


def _is_loopback(url: str) -> bool:
    from urllib.parse import urlsplit

    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


@contextmanager
def _remote(url: str, key: str | None) -> Iterator:
    """An AnnalsClient for `url`; its errors become one-line messages (exit 1)."""
    import httpx
    from pydantic import ValidationError

    from chalicelib.client import AnnalsAPIError, AnnalsClient

    if not key and _is_loopback(url):  # `make run` in this directory: its generated key
        path = Settings().key_path
        key = path.read_text().strip() if path.is_file() else None
    if not key:
        raise click.UsageError("--url needs an API key: --key or ANNALS_API_KEY")
    try:
        with AnnalsClient(url, key, retries=2) as client:
            yield client
    except AnnalsAPIError as err:
        raise click.ClickException(f"{url}: {err}") from None
    except httpx.HTTPError as err:
        raise click.ClickException(f"cannot reach {url}: {err}") from None
    except ValidationError as err:
        raise click.ClickException(str(err)) from None


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


@main.command(help="Serve MCP over stdio for a desktop client (Claude Desktop, Cursor, "
              "Cherry Studio …), on the local data dir: the tools act on --space with admin "
              "rights, or with the scope of --key (docs/mcp.md).")
@click.option("--space", required=True, help="the space the tools read and write")
@click.option("--key", envvar="ANNALS_MCP_KEY", show_envvar=True, default=None,
              help="act with this API key's scope (e.g. a read-only key) instead of admin")
def mcp(space: str, key: str | None) -> None:
    from chalicelib.domain.errors import AnnalsError
    from chalicelib.domain.models import check_id
    from chalicelib.mcp.stdio import run_stdio, scope_for

    try:
        check_id(space, "space")
    except AnnalsError as err:
        raise click.BadParameter(err.message, param_hint="--space") from None
    services = _services()
    try:
        scope = scope_for(services, space, key)
    except AnnalsError as err:
        raise click.ClickException(f"--key: {err.message}") from None
    run_stdio(services, space, scope)


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
@remote_options
def extract(space: str, session: str | None, url: str | None, key: str | None) -> None:
    if url:
        with _remote(url, key) as client, JobProgress() as progress:
            _echo_json(client.extract(space, session, on_progress=progress)
                       .model_dump(mode="json"))
        return
    from chalicelib.usecases.background import job_events

    services = _services()
    job = extract_here(services, space, session)
    _echo_json({"events": [e.model_dump(mode="json") for e in job_events(services, job)],
                "drafts": (job.result or {}).get("drafts", {})})


@main.command("import", help="Import chat history from FILE: OpenAI-style messages JSON, "
              "a SillyTavern .jsonl chat, or a LoCoMo conversation.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--space", required=True)
@click.option("--format", "fmt",
              type=click.Choice(["auto", "openai", "sillytavern", "locomo", "graph"]),
              default="auto", show_default=True,
              help="graph: a document written by `annals export --format graph` (events, "
                   "entities, threads, relations; vectors are rebuilt)")
@click.option("--session", default=None, help="session name (default: the file name)")
@click.option("--start", "start_", default=None,
              help="time of the first message when the file has none (ISO-8601 with offset; "
                   "the others one second apart); default: the file's modification time")
@click.option("--tz", default=None, help="IANA zone for times written without one")
@click.option("--user-name", default=None,
              help="the speaker of user messages the file names no one for (or only "
                   "'User', '{{user}}' …); a SillyTavern header's user_name comes first")
@click.option("--assistant-name", default=None,
              help="the same for assistant messages (a SillyTavern header's character_name "
                   "comes first)")
@click.option("--extract/--no-extract", "extract_now", default=False,
              help="extract events right away instead of waiting for the quiet window")
@click.option("--embed/--no-embed", default=True, show_default=True,
              help="embed the imported messages before returning (else a running server's "
                   "background lane does it); keywords are searchable either way")
@remote_options
def import_(file: Path, space: str, fmt: str, session: str | None, start_: str | None,
            tz: str | None, user_name: str | None, assistant_name: str | None,
            extract_now: bool, embed: bool, url: str | None, key: str | None) -> None:
    from zoneinfo import ZoneInfo

    from pydantic import ValidationError

    from chalicelib.domain.models import check_id
    from chalicelib.domain.names import is_placeholder
    from chalicelib.usecases import importing as importers

    if fmt == "graph":
        _import_graph(file, space, url, key)
        return
    zone = ZoneInfo(tz) if tz else UTC
    start = _parse_now(start_, "--start") or importers.file_start(file, zone)
    try:
        check_id(space, "space")
        names = importers.RoleNames(user=user_name, assistant=assistant_name)
        for flag, given in (("--user-name", user_name), ("--assistant-name", assistant_name)):
            if given is not None and is_placeholder(given):
                raise ValueError(f"{flag} {given!r} is a role word or placeholder, not a name")
        sessions = importers.read_file(file, fmt, session, start, zone, names)
    except (importers.ImportFormatError, ValueError) as exc:
        raise click.ClickException(f"{file}: {exc}") from None
    undated = importers.undated(sessions)
    warning = importers.undated_warning(undated, start, start_ is not None)
    left_out = importers.skipped(sessions)
    notes = {"undated": undated, **({"warning": warning} if warning else {}),
             "skipped": [s.as_dict() for s in left_out]}
    if warning:
        click.echo(f"warning: {warning}", err=True)
    for item in left_out:  # the rest is imported: one refused message spoils nothing else
        click.echo(f"warning: skipped line {item.line} of session {item.session}: "
                   f"{item.reason}", err=True)
    if url:
        _import_remote(url, key, space, sessions, extract_now, notes)
        return
    services = _services()
    with click.progressbar(length=len(sessions), label="importing", file=sys.stderr) as bar:
        try:
            report = importers.import_sessions(services, space, sessions,
                                               progress=lambda _: bar.update(1))
        except ValidationError as exc:
            raise click.ClickException(str(exc)) from None
    if embed:
        embed_queued(services)
    events = extract_here(services, space).progress.events if extract_now else 0
    _echo_json({"space": space, "sessions": report, "events_extracted": events, **notes})
    if not extract_now:
        _say_waiting(space, report, None, services.settings.quiet_minutes)


def _import_graph(file: Path, space: str, url: str | None, key: str | None) -> None:
    """A whole memory graph into SPACE: locally, or through POST …/graph of a running Annals."""
    from pydantic import ValidationError

    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph.models import GraphDocument

    try:
        check_id(space, "space")
        doc = GraphDocument.model_validate_json(file.read_bytes())
    except (ValidationError, ValueError) as exc:
        raise click.ClickException(f"{file}: not a graph document: {exc}") from None
    if url:
        with _remote(url, key) as client:
            _echo_json(client.import_graph(space, doc).model_dump(mode="json"))
        return
    from chalicelib.usecases.graph_import import import_graph

    services = _services()
    result = import_graph(services, space, doc, later=False)  # this process does the work
    embed_queued(services)
    _echo_json(result.model_dump(mode="json"))


def _import_remote(url: str, key: str | None, space: str, sessions: list,
                   extract_now: bool, notes: dict) -> None:
    """PUT each session in batches to a running Annals (its background lane embeds them).
    Messages without a time in the file get the same times as a local import would give
    them, except that times stored earlier are not looked up (the API has no such read)."""
    from chalicelib.usecases import importing as importers

    report = []
    with _remote(url, key) as client, click.progressbar(
            length=len(sessions), label="importing", file=sys.stderr) as bar:
        for imported in sessions:
            totals = {"session": imported.session, "accepted": 0, "unchanged": 0, "changed": 0}
            for batch in importers.batches(imported.messages):
                out = client.put_messages(space, imported.session, batch)
                for name in ("accepted", "unchanged", "changed"):
                    totals[name] += getattr(out, name)
            report.append(totals)
            bar.update(1)
        events = 0
        if extract_now:
            with JobProgress() as progress:
                events = len(client.extract(space, on_progress=progress).events)
    _echo_json({"space": space, "sessions": report, "events_extracted": events, **notes})
    if not extract_now:
        _say_waiting(space, report, url, None)


def _say_waiting(space: str, report: list[dict], url: str | None,
                 quiet_minutes: float | None) -> None:
    """After an import without --extract, say on stderr that the new messages are not
    memories yet and how they become ones: a new user's next `annals export` or recall
    would otherwise find nothing and not know why (issue 36)."""
    waiting = sum(r["accepted"] + r["changed"] for r in report)
    if not waiting:
        return
    where = f" --url {url}" if url else ""
    when = (f"after {quiet_minutes:g} quiet minutes" if quiet_minutes is not None
            else "after its quiet window")
    click.echo(f"note: {waiting} new message{'s' if waiting != 1 else ''} wait to be read "
               f"into memories: a running Annals (`annals serve`, a deployed stack) reads "
               f"them {when}; to read them now: annals extract --space {space}{where} "
               "(or import with --extract)", err=True)


def embed_queued(services) -> None:
    """Embed what the local outbox holds, with progress (a server's lane would otherwise)."""
    from chalicelib.usecases.indexing import OutboxIndexWriter

    if not isinstance(services.index, OutboxIndexWriter):
        return
    total = services.index.outbox.pending().vector_pending
    if not total:
        return
    with click.progressbar(length=total, label="embedding", file=sys.stderr) as bar:
        while done := services.index.drain("vector"):
            bar.update(done)


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
@remote_options
def recall(query: str, space: str, now_: str | None, max_cards: int | None,
           time_hint: str | None, window: str | None, fmt: str, as_json: bool,
           url: str | None, key: str | None) -> None:
    from chalicelib.domain.models import RecallRequest

    req = RecallRequest(query=query, now=_parse_now(now_), max_cards=max_cards,
                        time_hint=time_hint, window=window, format=fmt)
    if url:
        with _remote(url, key) as client:
            result = client.recall(space, req)
    else:
        from chalicelib.usecases.recall import recall as run

        result = run(_read_space(space), space, req)
    if as_json:
        _echo_json(result.model_dump(mode="json"))
        return
    for line in result.trace:
        click.echo(line, err=True)
    click.echo(result.context or "(nothing recalled)")


def _read_space(space: str):
    """The local services, for a read of `space`: one nothing was ever written to is an
    error (exit 1), as `--url` gets 404 unknown_space, not an empty answer."""
    from chalicelib.domain.errors import AnnalsError
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.spaces import require_space

    services = _services()
    try:
        check_id(space, "space")
        require_space(services, space)
    except AnnalsError as err:
        raise click.ClickException(err.message) from None
    return services


def local_zone():
    """ANNALS_TZ, else this machine's zone: the day a memory saved "now" belongs to."""
    from zoneinfo import ZoneInfo

    tz = Settings().tz
    return ZoneInfo(tz) if tz else datetime.now().astimezone().tzinfo


@main.command(help="Save a memory by hand: an event dated to the day of --at, or to today "
              "in ANNALS_TZ (else this machine's zone).")
@click.argument("summary")
@click.option("--space", required=True)
@click.option("--title", default=None, help="a short title (default: from the summary)")
@click.option("--at", "at_", default=None,
              help="when it happened, ISO-8601 with offset (the event covers that day; "
                   "default: today)")
@click.option("--details", default=None, help="more text, kept after the summary")
@click.option("--tag", "tags", multiple=True, help="a tag (repeatable)")
@click.option("--participant", "participants", multiple=True,
              help="someone it is about (repeatable)")
@click.option("--importance", type=click.IntRange(1, 10), default=6, show_default=True)
@remote_options
def save(summary: str, space: str, title: str | None, at_: str | None, details: str | None,
         tags: tuple[str, ...], participants: tuple[str, ...], importance: int,
         url: str | None, key: str | None) -> None:
    from pydantic import ValidationError

    from chalicelib.domain.models import SaveEventRequest, check_id

    # Today in the local zone, also for --url: a server only knows its own ANNALS_TZ.
    happened = _parse_now(at_, "--at") or datetime.now(local_zone())
    given = {"summary": summary, "title": title, "happened_at": happened,
             "details": details, "tags": list(tags), "participants": list(participants),
             "importance": importance}
    try:
        check_id(space, "space")
        request = SaveEventRequest.model_validate(
            {k: v for k, v in given.items() if v not in (None, [])})
    except (ValidationError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if url:
        with _remote(url, key) as client:
            event = client.save_event(space, request)
    else:
        from chalicelib.usecases import events as events_uc

        event = events_uc.save_event(_services(), space, request)
    _echo_json(event.model_dump(mode="json"))


@main.command(help="Export the chronicle as Markdown (default) or JSON.")
@click.option("--space", required=True)
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "graph"]),
              default="markdown", show_default=True,
              help="graph: the whole memory graph as JSON (import it with --format graph)")
@click.option("--status", type=click.Choice(["active", "archived", "all"]), default="active",
              show_default=True, help="which events to export")
@remote_options
def export(space: str, fmt: str, status: str, url: str | None, key: str | None) -> None:
    if fmt == "graph":
        if url:
            with _remote(url, key) as client:
                _echo_json(client.export_graph(space).model_dump(mode="json"))
            return
        from chalicelib.usecases.graph.transfer import export_graph

        _echo_json(export_graph(_read_space(space), space).model_dump(mode="json"))
        return
    if url:
        with _remote(url, key) as client:
            if fmt == "json":
                _echo_json(client.export(space, format="json", status=status)
                           .model_dump(mode="json"))
            else:
                click.echo(client.export(space, status=status))
        return
    from chalicelib.usecases import export as exp
    services = _read_space(space)
    if fmt == "json":
        _echo_json({"space": space, "events": exp.export_json(services, space, status)})
    else:
        click.echo(exp.export_markdown(services, space, services.settings.highlight_threshold,
                                       status))


@main.group(help="The memory graph: entities, threads, relations (docs/graph.md).")
def graph() -> None:
    pass


@graph.command("rebuild", help="Link the entities, threads and relations of every event of "
               "SPACE already stored (events extracted before the graph existed). Idempotent.")
@click.option("--space", required=True)
def graph_rebuild(space: str) -> None:
    from chalicelib.domain.models import check_id
    from chalicelib.usecases.graph import rebuild

    try:
        check_id(space, "space")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    services = _services()
    _echo_json({"space": space, **rebuild(services, space, services.clock())})


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


@main.group(help="API keys scoped to spaces and to read / write (docs/keys.md). Works on "
            "the local data dir; on AWS, use the /v1/keys API with an admin key.")
def keys() -> None:
    pass


@keys.command("create", help="Create a key and print it (shown this once; only its hash "
              "is kept).")
@click.option("--space", "spaces", multiple=True, help="a space the key may use (repeatable)")
@click.option("--all-spaces", is_flag=True, help="every space, present and future")
@click.option("--access", type=click.Choice(["read", "write"]), default="read",
              show_default=True, help="write implies read")
@click.option("--admin", is_flag=True, help="an admin key: every space, and managing keys")
@click.option("--label", default="", help="what the key is for, e.g. the client's name")
def keys_create(spaces: tuple[str, ...], all_spaces: bool, access: str, admin: bool,
                label: str) -> None:
    from pydantic import ValidationError

    from chalicelib.usecases import keys as keys_uc

    if admin and (spaces or all_spaces):
        raise click.UsageError("--admin keys cover every space; drop --space/--all-spaces")
    if not admin and bool(spaces) == all_spaces:
        raise click.UsageError("give --space (one or more) or --all-spaces")
    try:
        request = keys_uc.CreateKeyRequest(
            spaces=None if admin else ("*" if all_spaces else list(spaces)),
            access="admin" if admin else access, label=label)
    except ValidationError as exc:
        raise click.BadParameter(exc.errors()[0]["msg"], param_hint="--space") from None
    created = keys_uc.create_key(_services(), request)
    click.echo("The key is shown this once; only its hash is stored.", err=True)
    _echo_json(created.model_dump(mode="json"))


@keys.command("list", help="List keys: ids, labels, scopes, times (never the keys).")
def keys_list() -> None:
    from chalicelib.usecases import keys as keys_uc

    _echo_json(keys_uc.list_keys(_services()).model_dump(mode="json"))


@keys.command("revoke", help="Revoke the key with id KEY_ID: refused from the next request.")
@click.argument("key_id")
def keys_revoke(key_id: str) -> None:
    from chalicelib.domain.errors import NotFound
    from chalicelib.usecases import keys as keys_uc

    try:
        revoked = keys_uc.revoke_key(_services(), key_id)
    except NotFound as exc:
        raise click.ClickException(exc.message) from None
    _echo_json(revoked.model_dump(mode="json"))


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


@main.group(help="SillyTavern: the Annals extension (sillytavern/README.md).")
def sillytavern() -> None:
    pass


@sillytavern.command("install", help="Install the Annals extension into SillyTavern at "
                     "--st-dir (the folder with server.js): for one user (default "
                     "default-user) or, with --all-users, for everyone.")
@click.option("--st-dir", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--user", default="default-user", show_default=True,
              help="the SillyTavern user whose extensions folder gets it")
@click.option("--all-users", is_flag=True,
              help="install into public/scripts/extensions/third-party instead")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="SillyTavern's dataRoot when not <st-dir>/data")
@click.option("--url", default=None, help="the Annals server the extension starts with")
@click.option("--key", default=None, help="the API key it starts with (a write key)")
def sillytavern_install(st_dir: Path, user: str, all_users: bool, data_root: Path | None,
                        url: str | None, key: str | None) -> None:
    from chalicelib.local.sillytavern import InstallError, install

    try:
        target = install(st_dir, None if all_users else user, data_root, url, key)
    except InstallError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"installed the Annals extension in {target}")
    click.echo("reload SillyTavern; the panel is under Extensions → Annals memory. Start Annals "
               "with ANNALS_CORS_ORIGINS set to SillyTavern's address (e.g. "
               "ANNALS_CORS_ORIGINS=http://127.0.0.1:8000 annals serve).")
