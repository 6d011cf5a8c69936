"""``sitecache nginx-config``: the nginx server block of static-file mode for this site.

The rules carry the cache settings that exclude visitors (rejected cookies and user agents,
known users) and the headers sitecache sends with its own pages; ``cache status`` warns once
the stored settings no longer match the rules printed last.
"""

from __future__ import annotations

import argparse

from sitecache.cache.api.commands import print_nginx_config
from sitecache.cache.api.static import NGINX_RULES_NAME, nginx_rules_fingerprint
from sitecache.cache.storage import StorageError
from sitecache.cli.cache import open_engine
from sitecache.cli.configuration import configure, missing_site
from sitecache.cli.output import storage_failed
from sitecache.page_headers import page_headers
from sitecache.site.upload_types import FILE_TYPES

__all__ = ["command_nginx_config"]


def command_nginx_config(args: argparse.Namespace) -> int:
    """``sitecache nginx-config``: the server block of static-file mode for this site, sending
    with each copy the headers sitecache sends with its own pages."""
    config = configure(args, site=False)
    # The rules carry the cache settings that exclude visitors (rejected cookies and user
    # agents, known users); a site not made yet has the defaults, and nothing is created.
    try:
        engine = None if missing_site(config) else open_engine(config)
    except StorageError as exc:
        return storage_failed(exc)
    try:
        settings = engine.settings_values() if engine is not None else None
        code = print_nginx_config(
            args,
            config.site_url,
            config.static_directory,
            page_headers(config),
            uploads_root=config.uploads_directory,
            upload_types={
                extension: file_type.mime
                for file_type in FILE_TYPES.values()
                for extension in file_type.extensions
            },
            settings=settings,
        )
        if engine is not None and settings is not None:
            # `cache status` warns once the settings no longer match these rules.
            engine.write_value(NGINX_RULES_NAME, nginx_rules_fingerprint(settings).encode())
        return code
    finally:
        if engine is not None:
            engine.close()
