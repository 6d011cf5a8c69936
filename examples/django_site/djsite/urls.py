"""The example's pages."""

from django.urls import path
from notes import views

urlpatterns = [
    path("", views.home, name="home"),
    path("notes/<int:note_id>/", views.note, name="note"),
]
