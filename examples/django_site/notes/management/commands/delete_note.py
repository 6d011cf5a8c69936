"""``python manage.py delete_note ID``: delete a note from the command line; its ``post_delete``
handler purges the pages the web server cached."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from notes.models import Note


class Command(BaseCommand):
    help = "Delete the note with the given id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("id", type=int, help="the id of the note to delete")

    def handle(self, *args: Any, **options: Any) -> None:
        deleted, _ = Note.objects.filter(pk=options["id"]).delete()
        if not deleted:
            raise CommandError(f"no note {options['id']}")
        self.stdout.write(str(options["id"]))
