"""The origin of the peers table (`peers_bench.py`): a ~24 KB HTML page rendered by Jinja2.

`render` fills one template (layout, navigation, a list of posts with their excerpts, tags and
comment counts, a sidebar, a footer) from data built once per process, with the request path in
the title and in a canonical link, so every URL gets its own bytes. A render costs about 1.2-1.5 ms
of CPU on the 2-core benchmark machine: the order of a small site's page from a template, which
is what a page cache in front saves on a hit and adds to on a miss.

`origin_app` is the page as a bare WSGI app (no framework): the uncached stack that sitecache
and the proxies (nginx, Varnish) are compared with. Each render appends one byte to the file
``SITECACHE_BENCH_RENDERS`` when it is set (see `peer_apps.count_render`).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

CONTENT_TYPE = "text/html; charset=utf-8"
#: ten purge tags, as a post page of a site carries (sitecache reads them; the peers ignore them)
TAGS = "front-page, post-42, author-3, category-7, category-12, term-4, term-9, term-15, term-21"

#: The template, beside this file.
TEMPLATE = Path(__file__).with_name("jinja_page.html")

_WORDS = (  # noqa: SIM905 - a word list reads better as prose
    "cache page server request response header body static dynamic visitor editor post "
    "comment archive category tag feed theme plugin option query index latency worker "
    "process memory disk network proxy origin purge stale fresh expire render template "
    "the a of and to in is for on with as by at from that this it be are was"
).split()
_MONTHS = (  # noqa: SIM905
    "January February March April May June July August September October November December"
).split()


@cache
def _context() -> dict[str, Any]:
    """The template's data, the same in every process (a fixed seed)."""
    rng = random.Random(11)  # noqa: S311 - filler text, not security

    def sentence() -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."

    posts = [
        {
            "id": number,
            "link": f"/2026/11/post-{number}/",
            "title": sentence(),
            "date": f"2026-11-{number % 28 + 1:02d}",
            "date_text": f"November {number % 28 + 1}, 2026",
            "author": rng.choice(("editor", "admin", "guest writer")),
            "comments": rng.randint(0, 3),
            "paragraphs": [" ".join(sentence() for _ in range(2)) for _ in range(1)],
            "tags": [rng.choice(_WORDS) + "-" + rng.choice(_WORDS) for _ in range(10)],
        }
        for number in range(1, 21)
    ]
    return {
        "site": {
            "name": "Bench Site",
            "url": "http://127.0.0.1",
            "version": "1.4.2",
            "year": 2026,
            "sheets": ["site.css", "print.css"],
        },
        "menu": [{"slug": word, "name": word} for word in _WORDS[:12]],
        "current": _WORDS[3],
        "body_classes": ["home", "blog", "paged"],
        "posts": posts,
        "archives": [
            {
                "year": 2026 - number // 12,
                "number": 12 - number % 12,
                "name": _MONTHS[11 - number % 12],
                "count": rng.randint(1, 30),
            }
            for number in range(60)
        ],
        "footer": "Proudly served from a page cache.",
    }


@cache
def _template() -> jinja2.Template:
    source = TEMPLATE.read_text(encoding="utf-8")
    return jinja2.Environment(autoescape=False).from_string(source)  # noqa: S701 - escaped


def render(path: str) -> bytes:
    """The page for ``path`` (its title and canonical link name it), UTF-8."""
    text = _template().render(_context(), path=path, title=f"Page {path}")
    return text.encode("utf-8")


def count_render() -> None:
    """Append one byte to the render counter file, when the environment names one."""
    counter = os.environ.get("SITECACHE_BENCH_RENDERS")
    if counter:
        with open(counter, "ab") as handle:
            handle.write(b".")


def headers_for(body: bytes) -> list[tuple[str, str]]:
    """The response headers of ``body`` (those every contender's view sends)."""
    return [
        ("Content-Type", CONTENT_TYPE),
        ("Content-Length", str(len(body))),
        ("Cache-Tag", TAGS),
    ]


def origin(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """The page as a bare WSGI app: one render per request, counted."""
    count_render()
    body = render(str(environ.get("PATH_INFO", "/")))
    start_response("200 OK", headers_for(body))
    return [body]


def origin_app() -> WsgiApp:
    """`origin` alone: the uncached stack of sitecache's rows and of the proxies' rows."""
    return origin
