"""The notes app: connects the purge to ``post_save`` and ``post_delete`` when Django starts."""

from __future__ import annotations

from django.apps import AppConfig


class NotesConfig(AppConfig):
    """Wires `notes.signals` (the page-cache purge on every saved or deleted note)."""

    name = "notes"
    default_auto_field = "django.db.models.AutoField"

    def ready(self) -> None:
        from notes import signals

        signals.connect()
