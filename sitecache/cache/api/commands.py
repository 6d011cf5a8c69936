"""``sitecache cache status|stats|list|flush|preload|settings|enable|disable``: the cache from
the command line.

The commands work on the storage the server uses (the same data directory or Redis namespace);
``--json`` prints what a script reads. A failure exits non-zero with one line on standard error.
``preload`` asks the server to preload (the process holding the timers lock starts it within a
second) and follows the progress with a progress bar: pages are rendered by the server's own
workers, in-process, never over HTTP. The commands' grammar is `sitecache.cli.parser`'s; the
progress bar (rich) is imported by ``preload`` alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from sitecache.cache.api import CacheApi
from sitecache.cache.api.preload import Preloader
from sitecache.cache.api.purge_request import purge_request
from sitecache.cache.api.routes import parse_list_query
from sitecache.cache.api.static import nginx_config, unreadable_reason, uploads_location
from sitecache.cache.api.static_nginx import wants_brotli_static
from sitecache.cache.api.timers import PRELOAD_REQUEST_NAME
from sitecache.cache.engine import CacheEngine
from sitecache.cache.middleware import PageCache
from sitecache.cache.settings import SETTINGS_SCHEMA
from sitecache.domain_errors import DomainError, InvalidFields
from sitecache.hooks import Hooks
from sitecache.terminal import terminal_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

__all__ = [
    "SITE_COMMANDS",
    "CommandError",
    "print_nginx_config",
    "run_cache_command",
    "standalone_api",
]

#: seconds ``preload`` waits for a server to pick the request up
PICKUP_TIMEOUT = 10.0


def _print(value: Any, as_json: bool, lines: Iterable[str]) -> None:
    """``value`` as JSON (which escapes every control character), else each of ``lines``
    through `terminal_text`: an entry's URL or a setting's text never drives the terminal."""
    if as_json:
        print(json.dumps(value, indent=2, sort_keys=True))
    else:
        for line in lines:
            print(terminal_text(line))


def standalone_api(
    engine: CacheEngine,
    site_url: str | None,
    static_root: Path | None = None,
    *,
    load_entry_points: bool = False,
) -> CacheApi:
    """The cache API of ``engine`` without a site behind it (the command line serves no page):
    the application's listeners and companion plugins, the installed cache plugins too with
    ``load_entry_points``; no filters (the site's seams answer their defaults)."""

    def not_served(environ: Any, start_response: Any) -> list[bytes]:
        start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
        return [b"The command line does not serve pages.\n"]

    cache = PageCache(not_served, engine=engine)
    return CacheApi(
        cache, Hooks(), site_url, load_entry_points=load_entry_points, static_root=static_root
    )


class CommandError(DomainError):
    """A cache command cannot do what was asked (no server picked a preload up, nginx-config
    without a site_url); the command line prints the message."""


#: the commands that change the cache as the server's REST routes do: the command line runs
#: them on the site's own application (its plugins, webhooks and filters loaded)
SITE_COMMANDS: Final = frozenset({"flush", "settings", "enable", "disable"})


def run_cache_command(
    args: argparse.Namespace,
    engine: CacheEngine,
    site_url: str | None,
    static_root: Path | None = None,
    api: CacheApi | None = None,
) -> int:
    """Run ``sitecache cache <command>``; the exit status.

    ``api`` is the site's own cache API (`SITE_COMMANDS` need it): purges and settings go
    through the very functions the REST routes call, so the purge listeners (static-file
    copies, the purge webhook of the site's code) and the ``cache_post_tags`` filter act as
    they do for the server; the command waits for the webhook's deliveries before it returns.
    Without it, purges remove static-file copies under ``static_root`` only.

    Raises:
        DomainError: the command was refused (a bad option or URL, no server to preload).
        StorageError: the storage failed.
    """
    command = _COMMANDS[args.cache_command]
    return command(_Run(args, engine, site_url, static_root, bool(args.json), api))


@dataclass(frozen=True, slots=True)
class _Run:
    """One ``cache`` command's inputs."""

    args: argparse.Namespace
    engine: CacheEngine
    site_url: str | None
    static_root: Path | None
    as_json: bool
    api: CacheApi | None = None

    def site_api(self) -> CacheApi:
        """The site's cache API, else one built on the engine alone."""
        if self.api is not None:
            return self.api
        return standalone_api(self.engine, self.site_url, self.static_root)


def _status(run: _Run) -> int:
    status = standalone_api(run.engine, run.site_url).status()
    progress = status["preload"]
    _print(
        status,
        run.as_json,
        [
            f"enabled:     {status['enabled']}",
            f"storage:     {status['storage']['backend']} at {status['storage']['location']}"
            f" ({'writable' if status['storage']['writable'] else 'NOT writable'})",
            *(
                f"disk:        {disk['path']}: {disk['free_bytes'] / 1048576:.1f} MB free "
                f"({disk['free_percent']:g} %), {disk['level']}"
                for disk in status["disks"]
            ),
            f"preload:     {'running' if progress['running'] else 'idle'}, "
            f"{progress['done']}/{progress['total']} done, {progress['failed']} failed",
            f"gc:          last {status['gc']['last_run'] or 'never'}, "
            f"next {status['gc']['next_run'] or 'not scheduled'}"
            + _pending_text(status["gc"]["pending"]),
            *(f"warning:     {w['code']}: {w['message']}" for w in status["warnings"]),
        ],
    )
    return 0 if status["storage"]["writable"] else 1


def _pending_text(pending: Mapping[str, int]) -> str:
    """``, N entries (B bytes) left to remove`` when purges left any, else nothing."""
    if not pending["entries"] and not pending["bytes"]:
        return ""
    noun = "entry" if pending["entries"] == 1 else "entries"
    return f", {pending['entries']} purged {noun} ({pending['bytes']} bytes) left to remove"


def _stats(run: _Run) -> int:
    stats = run.engine.stats()
    requests = stats["requests"]
    preload = stats["preload"]
    own = stats["own"]
    _print(
        stats,
        run.as_json,
        [
            f"entries:  {stats['entries']['total']} ({stats['entries']['fresh']} fresh, "
            f"{stats['entries']['expired']} expired)",
            f"bytes:    {stats['bytes']['total']} (+{stats['bytes']['compressed']} gzip)",
            f"requests: {requests['hit']} hit, {requests['stale']} stale, "
            f"{requests['miss']} miss, {requests['bypass']} bypass "
            f"(hit ratio {requests['hit_ratio']:.1%})",
            f"preload:  {preload['hit']} hit, {preload['stale']} stale, "
            f"{preload['miss']} miss, {preload['bypass']} bypass "
            "(preload's own visits, not in the requests above)",
            f"own:      {own['hit']} hit, {own['stale']} stale, {own['miss']} miss, "
            f"{own['bypass']} bypass (the cache test and administration requests, not in the "
            "requests above)",
            *(f"bypass:   {k} {v}" for k, v in stats["bypass_reasons"].items()),
            *(f"purges:   {k} {v}" for k, v in stats["purges"].items()),
        ],
    )
    return 0


def _list(run: _Run) -> int:
    args = run.args
    query: dict[str, Any] = {"page": args.page, "per_page": args.per_page}
    if args.search:
        query["search"] = args.search
    if args.status:
        query["status"] = args.status
    try:
        page, per_page, search, status_filter = parse_list_query(query)
    except InvalidFields as refused:
        raise _option_error(refused) from None
    rows, total = run.engine.list_entries(page, per_page, search=search, status=status_filter)
    _print(
        {"total": total, "entries": rows},
        run.as_json,
        [
            *(
                f"{row['status']:8} {row['variant'] or '-':7} {row['size']:>9} {row['created']}"
                f"  {row['url']}"
                for row in rows
            ),
            f"{len(rows)} of {total} entries (page {page})",
        ],
    )
    return 0


def _flush_body(args: argparse.Namespace) -> dict[str, Any]:
    """``POST /cache``'s body for the ``flush`` options."""
    body: dict[str, Any] = {}
    if args.all:
        body["all"] = True
    elif args.expired:
        body["expired"] = True
    elif args.url:
        body.update({"url": args.url[0]} if len(args.url) == 1 else {"urls": args.url})
    elif args.tag:
        body.update({"tag": args.tag[0]} if len(args.tag) == 1 else {"tags": args.tag})
    elif args.post_id is not None:
        body["post_id"] = args.post_id
    if args.soft:
        body["soft"] = True
    return body


def _flush(run: _Run) -> int:
    api = run.site_api()
    try:
        result = purge_request(api, _flush_body(run.args))
    except InvalidFields as refused:
        raise _field_error(refused) from None
    finally:
        webhook = api.plugins.get("purge_webhook")
        if webhook is not None and hasattr(webhook, "wait"):
            webhook.wait()  # the notifications leave before the command exits
    soft = bool(run.args.soft)
    verb = "marked stale" if soft else "deleted"
    noun = "entry" if result.deleted == 1 else "entries"
    line = f"{result.deleted} {noun} {verb} ({result.bytes} bytes), scope {result.scope}"
    if result.deleted and not result.urls and not soft:
        # A purge that walked nothing: every entry is a miss now; the rows go later.
        line += "; the server's timers remove them in the background (see `cache status`)"
    _print(result.as_json(), run.as_json, [line])
    return 0


def _field_error(error: InvalidFields) -> InvalidFields:
    """A refusal of the REST API in one line: each bad field's own message (the REST
    answer's ``details``), else the refusal's message."""
    details = error.details.get("details", {})
    messages = [str(detail.get("message", "")) for detail in details.values()]
    return InvalidFields(error.code, " ".join(m for m in messages if m) or error.message,
                         error.details)  # fmt: skip


def _setting_value(key: str, text: str) -> Any:
    """The value ``text`` stands for: plain text for a text setting, else JSON when it parses
    (``600``, ``true``, ``["/a"]``), else the text itself (refused by the schema's check in
    the REST API's words)."""
    schema = SETTINGS_SCHEMA["properties"].get(key.partition(".")[0], {})
    if schema.get("type") == "string" and "." not in key:
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _settings(run: _Run) -> int:
    args, engine = run.args, run.engine
    if args.key is None:
        values = engine.settings_values()
        _print(values, run.as_json, [f"{k} = {json.dumps(v)}" for k, v in values.items()])
        return 0
    key, _, page_type = args.key.partition(".")
    if args.value is None:
        values = engine.settings_values()
        value = values.get(key)
        if page_type:
            value = value.get(page_type) if isinstance(value, dict) else None
        if value is None:
            raise _field_error(InvalidFields.from_fields(
                {args.key: {"code": "rest_invalid_param",
                            "message": f"{args.key} is not a valid property of Object."}}
            ))  # fmt: skip
        _print(value, run.as_json, [value if isinstance(value, str) else json.dumps(value)])
        return 0
    value = _setting_value(args.key, args.value)
    update = {key: {page_type: value}} if page_type else {key: value}
    return _update_settings(run, update, f"{args.key} = {json.dumps(value)}")


def _update_settings(run: _Run, update: dict[str, Any], line: str) -> int:
    """Apply ``update`` as ``POST /settings`` does (all or nothing, the same messages)."""
    try:
        values = run.engine.update_settings(update)
    except InvalidFields as refused:
        if run.as_json:
            _print({"code": refused.code, "message": refused.message,
                    "data": {"status": 400, **refused.details}}, True, [])  # fmt: skip
        raise _field_error(refused) from None
    _print(values, run.as_json, [line])
    return 0


def _enable(run: _Run) -> int:
    return _update_settings(run, {"enabled": True}, "caching enabled")


def _disable(run: _Run) -> int:
    return _update_settings(run, {"enabled": False}, "caching disabled: pages are served live")


#: ``cache list`` options by the REST parameter they fill
_LIST_OPTIONS = {"page": "--page", "per_page": "--per-page", "search": "--search"}


def _option_error(error: InvalidFields) -> InvalidFields:
    """A ``GET /cache`` query refusal in the command line's words: every bad option with its
    allowed values (``--per-page must be between 1 and 100``)."""
    details = error.details.get("details", {})
    lines = []
    for name, detail in details.items():
        option = _LIST_OPTIONS.get(name, name)
        message = str(detail.get("message", "")).removeprefix(f"{name} ").rstrip(".")
        if name == "per_page" and "between" not in message:
            message += " (1 to 100)"
        elif name == "page" and "at least" not in message:
            message += " (1 or more)"
        lines.append(f"{option} {message}")
    return InvalidFields(error.code, "; ".join(lines) or error.message, error.details)


def progress_bar(console: Console | None = None, *, disable: bool = False) -> Progress:
    """The preload progress bar: the count and the bar keep their room at 80 columns; the URL
    being visited takes what is left, shortened with an ellipsis."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.table import Column

    return Progress(
        TextColumn("preload"),
        MofNCompleteColumn(table_column=Column(no_wrap=True)),
        BarColumn(bar_width=20),
        TimeElapsedColumn(),
        TextColumn(
            "{task.fields[current]}",
            markup=False,  # a URL such as /[red]x/ is text, not rich markup
            table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis", min_width=8),
        ),
        console=console,
        disable=disable,
        expand=True,
    )


def _preload(run: _Run) -> int:
    preloader = standalone_api(run.engine, run.site_url).preloader
    if run.args.cancel:
        progress = preloader.cancel()
        _print(
            progress, run.as_json, ["preload cancelled" if progress["done"] else "no preload ran"]
        )
        return 0
    _ask_for_preload(run.engine, preloader)
    if run.args.no_wait:
        progress = preloader.progress()
        _print(progress, run.as_json, [f"preload started: {progress['total']} pages"])
        return 0
    with progress_bar(disable=run.as_json or not sys.stderr.isatty()) as bar:
        state = preloader.state()
        task = bar.add_task("preload", total=state["total"] or None, current="")
        while state["running"]:
            bar.update(task, completed=state["done"], current=terminal_text(state["current"] or ""))
            time.sleep(0.2)
            state = preloader.state()
        bar.update(task, completed=state["done"], current="")
    progress = preloader.progress()
    finished = progress["done"] == progress["total"]
    word = "finished" if finished else "stopped"
    summary = f"preload {word}: {progress['done']}/{progress['total']} pages"
    _print(progress, run.as_json, [f"{summary}, {progress['failed']} failed"])
    return 0 if finished and not progress["failed"] else 1


def _ask_for_preload(engine: CacheEngine, preloader: Preloader) -> None:
    """Ask the server's timer holder to start a preload (unless one runs) and wait until it
    did.

    Raises:
        CommandError: no server picked the request up within `PICKUP_TIMEOUT` seconds.
    """
    before = preloader.state()
    if before["running"]:
        return
    engine.write_value(PRELOAD_REQUEST_NAME, b"1")
    deadline = time.monotonic() + PICKUP_TIMEOUT
    while preloader.state()["started"] == before["started"]:
        if time.monotonic() > deadline:
            engine.write_value(PRELOAD_REQUEST_NAME, b"")
            raise CommandError(
                "site_cache_no_server",
                "no running server picked the preload up (start `sitecache serve` and "
                "visit the site once so its timers run)",
            )
        time.sleep(0.1)


#: ``sitecache cache <name>`` -> what it runs
_COMMANDS: Final[Mapping[str, Callable[[_Run], int]]] = {
    "status": _status,
    "stats": _stats,
    "list": _list,
    "flush": _flush,
    "preload": _preload,
    "settings": _settings,
    "enable": _enable,
    "disable": _disable,
}


def print_nginx_config(
    args: argparse.Namespace,
    site_url: str | None,
    static_root: Path,
    headers: Mapping[str, str] | None = None,
    uploads_root: Path | None = None,
    upload_types: Mapping[str, str] | None = None,
    settings: Mapping[str, Any] | None = None,
) -> int:
    """Print the server block for ``site_url`` with the bypasses of the cache ``settings``
    (`nginx_config`); the exit status.

    Fails (one line) without ``site_url``, and when ``--user`` could not read ``static_root``
    (unless ``--no-check``): nginx would otherwise silently proxy every request. Uploaded
    media under ``uploads_root`` get a ``location /uploads/`` (``upload_types``: extension →
    MIME type) when ``--user`` can read them (else a comment says why sitecache serves them).

    Raises:
        CommandError: no ``site_url``, or ``static_root`` unreadable by ``--user``.
    """
    if not site_url:
        raise CommandError(
            "site_cache_no_site_url",
            "set site_url first (site_url in the configuration file, or SITECACHE_SITE_URL): "
            "nginx's server_name is the site's host name",
        )
    if not args.no_check:
        reason = unreadable_reason(static_root, args.user)
        if reason is not None:
            raise CommandError("site_cache_static_root_unreadable", f"static-file mode: {reason}")
    host = urlsplit(site_url).hostname or ""
    unreadable = None
    if uploads_root is not None and not args.no_check:
        unreadable = unreadable_reason(uploads_root, args.user)
    uploads = uploads_location(uploads_root, upload_types, unreadable)
    brotli = wants_brotli_static(getattr(args, "brotli", "auto"))
    try:
        text = nginx_config(server_name=host, static_root=static_root, upstream=args.upstream,
                            listen=args.listen, headers=headers, user=args.user,
                            uploads=uploads, settings=settings, brotli=brotli)  # fmt: skip
    except ValueError as exc:
        raise CommandError("site_cache_nginx_unwritable", f"static-file mode: {exc}") from exc
    print(text, end="")
    return 0
