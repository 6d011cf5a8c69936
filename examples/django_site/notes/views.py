"""The pages: each one tags itself so that a saved note purges exactly what shows it."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.html import escape

from notes.models import Note
from sitecache.cache import cache_headers


def tagged(response: HttpResponse, **directives: object) -> HttpResponse:
    """``response`` with the page-cache headers of ``directives`` (see `cache_headers`)."""
    for name, value in cache_headers(**directives):  # type: ignore[arg-type]
        response[name] = value
    return response


def home(request: HttpRequest) -> HttpResponse:
    """Every note; tagged ``notes``."""
    items = "".join(
        f'<li><a href="/notes/{note.pk}/">{escape(note.text)}</a></li>'
        for note in Note.objects.order_by("pk")
    )
    return tagged(HttpResponse(f"<h1>Notes</h1><ul>{items}</ul>"), tags=["notes"])


def note(request: HttpRequest, note_id: int) -> HttpResponse:
    """One note; tagged ``note-<id>``, fresh for at most ten minutes."""
    found = Note.objects.filter(pk=note_id).first()
    if found is None:
        raise Http404("no such note")
    page = HttpResponse(f"<h1>{escape(found.text)}</h1>")
    return tagged(page, tags=[f"note-{note_id}"], s_maxage=600)
