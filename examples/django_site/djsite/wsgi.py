"""The WSGI application: Django's, behind sitecache's page cache.

``gunicorn --bind HOST:PORT djsite.wsgi:application`` (from this directory).
"""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from sitecache.cache import DiskStorage, PageCache

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "djsite.settings")

application = PageCache(
    get_wsgi_application(),
    DiskStorage(settings.SITECACHE_DIR),
    hosts=settings.SITECACHE_HOSTS,
)
