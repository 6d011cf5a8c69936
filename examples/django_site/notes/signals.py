"""Purge the cached pages that show a note whenever one is saved or deleted, in whatever process
does it (a web worker, ``manage.py``, a task queue): the purge goes through the cache's storage.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from sitecache.cache import Purger


@functools.cache
def purger() -> Purger:
    """The purge API on the cache directory ``wsgi.py`` serves from (opened once per process)."""
    return Purger.open("disk", path=settings.SITECACHE_DIR, hosts=settings.SITECACHE_HOSTS)


def purge_note_pages(sender: type, instance: Any, **kwargs: Any) -> None:
    """After the save or delete commits: purge the list (tag ``notes``) and the note's page
    (``note-<id>``). The tags are taken now: Django clears a deleted instance's ``pk`` once its
    ``post_delete`` handlers have run."""
    tags = ["notes", f"note-{instance.pk}"]
    transaction.on_commit(lambda: purger().purge_tags(tags))


def connect() -> None:
    """Listen to ``post_save`` and ``post_delete`` of `notes.models.Note` (a deleted note must
    leave the list and its own page as surely as an edited one changes them)."""
    from notes.models import Note

    post_save.connect(purge_note_pages, sender=Note, dispatch_uid="sitecache-purge-notes")
    post_delete.connect(purge_note_pages, sender=Note, dispatch_uid="sitecache-purge-notes-delete")
