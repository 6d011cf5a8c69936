"""A Flask site behind sitecache's page cache: tagged views, purged when a form is saved.

Serve it with any WSGI server, e.g. ``gunicorn --bind HOST:PORT examples.flask_app:app``, or
``python examples/flask_app.py --host HOST --port PORT`` (Flask's development server; default
``$HOST``/``$PORT``, else ``127.0.0.1:8000``). The environment says the rest:

- ``$FLASK_EXAMPLE_DIR``: where the notes (SQLite) and the cache directory live
  (``var/flask-example``);
- ``$PAGECACHE_HOSTS``: the hosts cached (comma-separated; unset: loopback names only).

Every gunicorn worker wraps ``app.wsgi_app`` in its own `PageCache` on the same cache
directory: a purge in one worker is a miss in all of them.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from flask import Flask, abort, redirect, render_template_string, request, url_for
from werkzeug.wrappers import Response

from sitecache.cache import DiskStorage, PageCache, cache_headers

DATA = Path(os.environ.get("FLASK_EXAMPLE_DIR", "var/flask-example"))
HOSTS = [host for host in os.environ.get("PAGECACHE_HOSTS", "").split(",") if host] or None

PAGE = """<!doctype html><title>{{ title }}</title><h1>{{ title }}</h1>
{% for id, text in notes %}<p><a href="/notes/{{ id }}/">{{ text }}</a></p>{% endfor %}
<form method="post" action="/notes/"><input name="text"><button>Add</button></form>"""

app = Flask(__name__)
DATA.mkdir(parents=True, exist_ok=True)
cache = PageCache(app.wsgi_app, DiskStorage(DATA / "cache"), hosts=HOSTS)
app.wsgi_app = cache  # type: ignore[method-assign]


def database() -> sqlite3.Connection:
    """The notes database (made on first use)."""
    connection = sqlite3.connect(DATA / "notes.sqlite3")
    connection.execute("CREATE TABLE IF NOT EXISTS note (id INTEGER PRIMARY KEY, text TEXT)")
    return connection


@app.get("/")
def home() -> tuple[str, int, list[tuple[str, str]]]:
    """Every note; tagged ``notes`` (purged when any note changes)."""
    with database() as connection:
        notes = connection.execute("SELECT id, text FROM note ORDER BY id").fetchall()
    return (
        render_template_string(PAGE, title="Notes", notes=notes),
        200,
        cache_headers(tags=["notes"]),
    )


@app.get("/notes/<int:note_id>/")
def note(note_id: int) -> tuple[str, int, list[tuple[str, str]]]:
    """One note; tagged ``note-<id>``, fresh for at most an hour."""
    with database() as connection:
        row = connection.execute("SELECT text FROM note WHERE id = ?", (note_id,)).fetchone()
    if row is None:
        abort(404)
    headers = cache_headers(tags=[f"note-{note_id}"], s_maxage=3600)
    return render_template_string(PAGE, title=row[0], notes=[]), 200, headers


@app.post("/notes/")
def add_note() -> Response:
    """Save a note from the form, then purge the pages that show it (the POST itself is never
    cached)."""
    text = request.form.get("text", "").strip()
    if not text:
        abort(400)
    with database() as connection:
        connection.execute("INSERT INTO note (text) VALUES (?)", (text,))
    cache.purger.purge_tags(["notes"])
    return redirect(url_for("home"), 303)


def listen_address(argv: Sequence[str] | None = None) -> tuple[str, int]:
    """``(host, port)`` from ``--host``/``--port``, else ``$HOST``/``$PORT``, else
    ``127.0.0.1:8000``."""
    parser = argparse.ArgumentParser(description="Serve the Flask example.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    arguments = parser.parse_args(argv)
    return arguments.host, arguments.port


if __name__ == "__main__":
    host, port = listen_address()
    app.run(host, port)
