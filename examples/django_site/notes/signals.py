"""Purge the cached pages that show a note whenever one is saved, in whatever process saves it
(a web worker, ``manage.py``, a task queue): the purge goes through the cache's storage.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_save

from sitecache.cache import Purger


@functools.cache
def purger() -> Purger:
    """The purge API on the cache directory ``wsgi.py`` serves from (opened once per process)."""
    return Purger.open("disk", path=settings.SITECACHE_DIR, hosts=settings.SITECACHE_HOSTS)


def purge_note_pages(sender: type, instance: Any, **kwargs: Any) -> None:
    """After the save commits: purge the list (tag ``notes``) and the note's page
    (``note-<id>``)."""
    tags = ["notes", f"note-{instance.pk}"]
    transaction.on_commit(lambda: purger().purge_tags(tags))


def connect() -> None:
    """Listen to ``post_save`` of `notes.models.Note`."""
    from notes.models import Note

    post_save.connect(purge_note_pages, sender=Note, dispatch_uid="sitecache-purge-notes")
