"""A note: the content whose changes purge the cached pages."""

from django.db import models


class Note(models.Model):
    """One note with its text."""

    text = models.CharField(max_length=200)

    def __str__(self) -> str:
        return self.text
