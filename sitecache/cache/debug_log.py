"""The cache's debug log (the ``debug`` setting): one line per request, never a secret.

Each line names the method, the path, the query parameter names, the status and the
``Cache-Status`` value. SECURITY: never cookies, credentials or query values (they may carry
tokens); the log file is private to the server's user (0600).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from sitecache.cache.capture import StartResponse
from sitecache.cache.keys import normalize_path

__all__ = ["close_debug_log", "debug_logger", "debugging"]


def debug_logger(path: str | Path | None) -> logging.Logger:
    """The debug logger: a logger of its own (unregistered) on a private file (0600) when
    ``path`` is given, else the shared ``sitecache.cache.debug`` logger.

    Raises:
        OSError: the file or its directory could not be created.
    """
    if path is None:
        return logging.getLogger("sitecache.cache.debug")
    debug = logging.Logger("sitecache.cache.debug", logging.INFO)
    target = Path(path)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    target.touch(mode=0o600, exist_ok=True)
    handler = logging.FileHandler(target, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(message)s"))
    debug.addHandler(handler)
    return debug


def close_debug_log(logger: logging.Logger) -> None:
    """Close the handlers of a logger `debug_logger` made for a file."""
    for handler in list(logger.handlers):
        handler.close()


def debugging(
    logger: logging.Logger, environ: Mapping[str, Any], start_response: StartResponse
) -> StartResponse:
    """``start_response`` that also writes the request's debug line to ``logger``."""
    method = str(environ.get("REQUEST_METHOD", ""))
    path = normalize_path(str(environ.get("PATH_INFO", "")))
    query = environ.get("QUERY_STRING", "")
    # SECURITY: parameter names only: values may carry tokens; never cookies or credentials.
    names = ",".join(
        sorted({quote(name, safe="") for name, _ in parse_qsl(query, keep_blank_values=True)})
    )

    def debugging_start_response(
        status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Any:
        cache_status = next((v for k, v in headers if k == "Cache-Status"), "-")
        logger.info("%s %s%s %s %s", method, path, f" ?{names}" if names else "",
                    status.split(" ", 1)[0], cache_status)  # fmt: skip
        return start_response(status, headers, exc_info)

    return debugging_start_response
