"""``python manage.py add_note TEXT`` (or ``--edit ID TEXT``): save a note from the command line;
its ``post_save`` handler purges the pages the web server cached."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from notes.models import Note


class Command(BaseCommand):
    help = "Add a note, or change one with --edit ID."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("text")
        parser.add_argument("--edit", type=int, help="the id of the note to change")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["edit"] is not None:
            note = Note.objects.get(pk=options["edit"])
            note.text = options["text"]
            note.save()
        else:
            note = Note.objects.create(text=options["text"])
        self.stdout.write(str(note.pk))
