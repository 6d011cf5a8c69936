"""Settings of the example project: everything that depends on the deployment comes from the
environment (no host, port, path or secret is written here).

- ``DJANGO_EXAMPLE_DIR``: the SQLite database and the page cache's directory
  (``var/django-example``);
- ``PAGECACHE_HOSTS``: the hosts served and cached (comma-separated; unset: loopback names);
- ``DJANGO_SECRET_KEY``: Django's secret (unset: a random one per process, enough here since
  the example keeps no session).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

DATA_DIR = Path(os.environ.get("DJANGO_EXAMPLE_DIR", "var/django-example")).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

#: where the page cache keeps pages: read by wsgi.py (PageCache) and the purge handlers (signals.py)
SITECACHE_DIR = DATA_DIR / "cache"
#: the hosts the page cache serves (None: loopback names, any port)
SITECACHE_HOSTS = [h for h in os.environ.get("PAGECACHE_HOSTS", "").split(",") if h] or None

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or secrets.token_urlsafe(50)
DEBUG = False
ALLOWED_HOSTS = (
    [host.rsplit(":", 1)[0] for host in SITECACHE_HOSTS]
    if SITECACHE_HOSTS
    else ["localhost", "127.0.0.1", "[::1]"]
)
INSTALLED_APPS = ["notes"]
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
]
ROOT_URLCONF = "djsite.urls"
WSGI_APPLICATION = "djsite.wsgi.application"
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATA_DIR / "db.sqlite3"}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
