"""What the front web server of static-file mode needs: its ``server`` block (`nginx_config`),
whether its user can read the static root (`unreadable_reason`), and whether the rules it was
given still fit the cache settings (`outdated_nginx_rules`).

The web server reads the copies as its own user (Debian's nginx workers run as ``www-data``):
`unreadable_reason` says when a directory on the way to the static root (the 0700 data
directory, say) keeps that user out.
"""

from __future__ import annotations

import grp
import hashlib
import json
import pwd
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from sitecache.cache.engine import CacheEngine
from sitecache.cache.policy import AUTH_COOKIE_PREFIXES
from sitecache.cache.settings import DEFAULT_SETTINGS

__all__ = [
    "BROTLI_STATIC_MODULES",
    "DEFAULT_WEB_USER",
    "NGINX_RULES_NAME",
    "NGINX_RULE_SETTINGS",
    "host_name",
    "nginx_config",
    "nginx_rules_fingerprint",
    "outdated_nginx_rules",
    "unreadable_reason",
    "uploads_location",
    "wants_brotli_static",
]

#: the user Debian's (and Ubuntu's) nginx workers run as
DEFAULT_WEB_USER: Final = "www-data"
#: Where nginx's ``brotli_static`` module is found when installed (Debian's
#: ``libnginx-mod-http-brotli-static`` package: its load snippet, and the module itself).
BROTLI_STATIC_MODULES: Final = (
    Path("/usr/share/nginx/modules-available/mod-http-brotli-static.conf"),
    Path("/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"),
)


def wants_brotli_static(
    choice: str = "auto", modules: Iterable[Path] = BROTLI_STATIC_MODULES
) -> bool:
    """Whether the server block turns ``brotli_static`` on: ``on``/``off`` as said, ``auto``
    when one of ``modules`` exists on this machine (nginx refuses a directive of a module it
    has not loaded, so it is never written blindly)."""
    if choice in ("on", "off"):
        return choice == "on"
    return any(path.exists() for path in modules)


def host_name(host: str) -> str:
    """The directory name of ``host`` (``example.org:8000`` -> ``example.org``, as
    `sitecache.cache.api.static.StaticFiles.directory` names it)."""
    return (urlsplit(f"//{host}").hostname or host).lower()


def unreadable_reason(root: Path, user: str) -> str | None:
    """Why ``user`` could not read files under ``root``, or ``None`` when it can.

    Every existing directory from ``/`` down to ``root`` must let the user in (search
    permission for its owner, one of its groups, or others); ``root`` itself, when it exists,
    must also be listable. A ``root`` that does not exist yet is created 0755 by sitecache.
    """
    try:
        account = pwd.getpwnam(user)
    except KeyError:
        return (
            f"there is no user {user!r} on this machine: pass --user with the user nginx's "
            "workers run as"
        )
    groups = {account.pw_gid} | {g.gr_gid for g in grp.getgrall() if user in g.gr_mem}
    if account.pw_uid == 0:
        return None
    path = Path(root).resolve()
    for directory in [*reversed(path.parents), path]:
        try:
            info = directory.stat()
        except FileNotFoundError:
            return None  # sitecache creates the rest 0755
        except OSError as exc:
            return f"{directory} cannot be checked: {exc.strerror}"
        needed = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
        if directory == path:
            needed = (stat.S_IXUSR | stat.S_IRUSR, stat.S_IXGRP | stat.S_IRGRP,
                      stat.S_IXOTH | stat.S_IROTH)  # fmt: skip
        if info.st_uid == account.pw_uid:
            mask = needed[0]
        elif info.st_gid in groups:
            mask = needed[1]
        else:
            mask = needed[2]
        if info.st_mode & mask != mask:
            return (
                f"{user} cannot enter {directory} (mode {stat.S_IMODE(info.st_mode):04o}, owner "
                f"uid {info.st_uid}): put static_root outside private directories such as the "
                "data directory (for example /var/cache/sitecache/static), or let that user "
                "search every directory on the way"
            )
    return None


#: The server block of static-file mode (`nginx_config` fills it in; ``{{``/``}}`` are braces).
NGINX_TEMPLATE: Final = """\
# sitecache static-file mode (static_files = true): nginx answers cached pages from
# {root}; everything else goes to sitecache. Set proxy_count = 1 in sitecache.
# Made for the cache settings {made_for}:
# run `sitecache nginx-config` again (and reload nginx) after changing them
# (`sitecache cache status` warns when they differ).
# nginx's workers (user {user}) must be able to read {root} and enter every directory
# above it: keep it outside sitecache's private data directory (static_root).
upstream sitecache {{
    server {upstream};
}}

server {{
    listen {listen};
    server_name {server_name};
    root {root};
    gzip_static on;
{brotli}    # Vary is added with the copies below: gzip_vary opens index.html.gz for every request,
    # even from a client that cannot take it, only to learn whether to say it.
    gzip_vary off;
    charset utf-8;

    set $sitecache_static $uri;
    if ($request_method !~ ^(GET|HEAD)$) {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($query_string != "") {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($http_authorization != "") {{ set $sitecache_static "/.sitecache-bypass"; }}
    if ($http_cookie ~* "({cookies})") {{ set $sitecache_static "/.sitecache-bypass"; }}
{extra_rules}
    location / {{
        default_type text/html;
        # The headers sitecache sends with its own pages (a copy must not lose them).
        add_header Vary Accept-Encoding always;
{added}        add_header Cache-Status "nginx; hit" always;
        try_files /$host$sitecache_static/index.html @sitecache;
    }}

{uploads}
    location @sitecache {{
        proxy_pass http://sitecache;
        # The Host as the client sent it (with its port): the cache keys exactly that host.
        # No X-Forwarded-Port: the port is already in the host, said once.
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $http_host;
    }}
}}
"""


#: The uploaded media files, served by nginx from the uploads directory (`nginx_config`).
NGINX_UPLOADS_TEMPLATE: Final = """\
    # Uploaded media (static files with generated names): served from {root}.
    location /uploads/ {{
        alias {root}/;
        types {{
{types}        }}
        default_type application/octet-stream;
        location ~ /\\. {{ return 404; }}
        location ~* \\.(svg|html?)$ {{
            # Types that can run scripts: a download in a sandbox, never a page of the site.
            add_header X-Content-Type-Options nosniff always;
            add_header Cache-Control "public, max-age=31536000, immutable" always;
            add_header Content-Disposition attachment always;
            add_header Content-Security-Policy "default-src 'none'; sandbox" always;
        }}
        add_header X-Content-Type-Options nosniff always;
        add_header Cache-Control "public, max-age=31536000, immutable" always;
        etag on;
    }}
"""


def uploads_location(
    uploads_root: Path | None,
    types: Mapping[str, str] | None = None,
    unreadable: str | None = None,
) -> str:
    """The ``location /uploads/`` block serving ``uploads_root`` with the ``Content-Type`` of
    each extension in ``types`` (extension → MIME type; anything else is
    ``application/octet-stream``), or, when nginx's user cannot read it (``unreadable`` says
    why), a comment: sitecache serves them instead."""
    if uploads_root is None:
        return ""
    if unreadable is not None:
        reason = unreadable.replace("\n", " ")
        return f"    # /uploads/ is passed to sitecache (uploads_root unreadable): {reason}\n"
    listed = "".join(
        f"            {mime} {extension};\n"
        for extension, mime in sorted((types or {}).items())
        if _NGINX_TOKEN.match(mime) and _NGINX_TOKEN.match(extension)
    )
    return NGINX_UPLOADS_TEMPLATE.format(root=str(Path(uploads_root).resolve()), types=listed)


_NGINX_TOKEN: Final = re.compile(r"^[A-Za-z0-9.+/-]+$")
"""A MIME type or an extension nginx reads as one word (nothing else is written)."""


#: The cache settings the web server's rules carry (`nginx_config`): a visitor they would send
#: to Python must never be given a static copy by nginx.
NGINX_RULE_SETTINGS: Final = ("known_users", "rejected_cookies", "rejected_user_agents")
#: The named value holding the fingerprint of the settings the printed rules were made for.
NGINX_RULES_NAME: Final = "nginx_rules"


def nginx_rules_fingerprint(settings: Mapping[str, Any]) -> str:
    """The fingerprint of the settings nginx's rules depend on (`NGINX_RULE_SETTINGS`)."""
    chosen = {name: settings.get(name) for name in NGINX_RULE_SETTINGS}
    text = json.dumps(chosen, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def outdated_nginx_rules(engine: CacheEngine) -> str | None:
    """Why the rules `sitecache nginx-config` last printed no longer fit the settings (a
    ``/status`` warning), or ``None``: they fit, static-file mode is off, or no rules were
    printed for this storage."""
    if not engine.settings().static_files:
        return None
    stored = engine.read_value(NGINX_RULES_NAME)
    if stored is None or stored.decode("ascii", "replace") == nginx_rules_fingerprint(
        engine.settings_values()
    ):
        return None
    return (
        "static-file mode: known_users, rejected_cookies or rejected_user_agents changed since "
        "`sitecache nginx-config` printed nginx's rules, and nginx still hands its copies to "
        "the visitors they now exclude: run `sitecache nginx-config` again and reload nginx"
    )


def nginx_config(
    *,
    server_name: str,
    static_root: Path,
    upstream: str = "127.0.0.1:8000",
    listen: str = "80",
    cookie_prefixes: Iterable[str] = AUTH_COOKIE_PREFIXES,
    headers: Mapping[str, str] | None = None,
    user: str = DEFAULT_WEB_USER,
    uploads: str = "",
    settings: Mapping[str, Any] | None = None,
    brotli: bool = False,
) -> str:
    """An nginx ``server`` block for static-file mode.

    Anonymous ``GET``/``HEAD`` requests without a query string, credentials or a logged-in,
    comment-author or post-password cookie get the static copy when one exists
    (``gzip_static on`` sends ``index.html.gz`` to clients that accept gzip, and with
    ``brotli`` ``brotli_static on`` sends ``index.html.br`` to clients that accept ``br``: the
    module must be loaded, `wants_brotli_static`; every copy says ``Vary: Accept-Encoding``,
    without the look for ``index.html.gz`` that ``gzip_vary`` would make for each request);
    everything else is proxied to sitecache (run it with
    ``proxy_count = 1``). ``headers`` are sent with every copy, as sitecache sends them with
    its own pages (security headers, the API ``Link``); ``user`` is the user nginx's workers
    run as, who must be able to read the static root. ``uploads`` is the uploaded media's
    block (`uploads_location`). ``settings`` (the cache's) add their bypasses
    (`NGINX_RULE_SETTINGS`): ``rejected_cookies`` to the cookie prefixes, a user-agent rule
    for ``rejected_user_agents``, and any cookie at all with ``known_users`` =
    ``bypass_any_cookie``.

    Raises:
        ValueError: a header value or a setting cannot be written in nginx's syntax (a ``$``,
            a quote in a header, a control character).
    """
    settings = settings or {}
    prefixes = [*cookie_prefixes, *settings.get("rejected_cookies", ())]
    cookies = "|".join(sorted({_nginx_regex(prefix) for prefix in prefixes}))
    bypass = '{ set $sitecache_static "/.sitecache-bypass"; }'
    extra_rules = ""
    if settings.get("known_users") == "bypass_any_cookie":
        extra_rules += f'    if ($http_cookie != "") {bypass}\n'
    rejected_agents = settings.get("rejected_user_agents", ())
    agents = sorted({_nginx_regex(agent.lower()) for agent in rejected_agents})
    if agents:
        extra_rules += f'    if ($http_user_agent ~* "({"|".join(agents)})") {bypass}\n'
    made_for = ", ".join(
        f"{name}={json.dumps(settings.get(name, DEFAULT_SETTINGS[name]))}"
        for name in NGINX_RULE_SETTINGS
    )
    root = str(Path(static_root).resolve())
    added = "".join(
        f"        add_header {name} {_nginx_string(value)} always;\n"
        for name, value in (headers or {}).items()
    )
    return NGINX_TEMPLATE.format(
        root=root, user=user, upstream=upstream, listen=listen, server_name=server_name,
        cookies=cookies, added=added, uploads=uploads, extra_rules=extra_rules,
        made_for=_nginx_comment(made_for),
        brotli="    brotli_static on;\n" if brotli else "",
    )  # fmt: skip


def _nginx_string(value: str) -> str:
    """``value`` as one double-quoted nginx string.

    Raises:
        ValueError: ``value`` holds a ``$`` (nginx would read a variable) or a line break.
    """
    if "$" in value or "\n" in value or "\r" in value:
        raise ValueError(f"header value {value!r} cannot be written in an nginx configuration")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _nginx_regex(text: str) -> str:
    """``text`` as a literal in an nginx regular expression inside a double-quoted string:
    every character but letters, digits and ``_`` escaped.

    Raises:
        ValueError: ``text`` holds a control character (no literal can carry it).
    """
    if any(ord(char) < 32 or ord(char) == 127 for char in text):
        raise ValueError(f"{text!r} cannot be written in an nginx configuration")
    return "".join(f"\\{char}" if not (char.isalnum() or char == "_") else char for char in text)


def _nginx_comment(text: str) -> str:
    """``text`` for one comment line (control characters and non-ASCII escaped)."""
    return text.encode("ascii", "backslashreplace").decode("ascii").replace("\n", " ")
