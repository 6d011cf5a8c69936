"""``sitecache openapi`` and ``sitecache health``: what the whole site says of itself (its
routes, its health), read on the site's own application as the server builds it."""

from __future__ import annotations

import argparse
import json

from sitecache.app import App
from sitecache.cli.configuration import configure
from sitecache.cli.output import say
from sitecache.rest.openapi import openapi_document
from sitecache.site.health import HEALTH_TESTS, run_health_test

__all__ = ["command_health", "command_openapi"]


def command_openapi(args: argparse.Namespace) -> int:
    """``sitecache openapi``: the OpenAPI 3.1 document of every route of the site (its
    plugins' routes included), as JSON on standard output."""
    app = App(configure(args))
    try:
        print(json.dumps(openapi_document(app.server), indent=2))
    finally:
        app.cache.close()
        app.auth.store.close()
    return 0


def command_health(args: argparse.Namespace) -> int:
    """``sitecache health``: every site-health test as the REST routes run it (for a local,
    plain-HTTP caller), one line each or JSON; exit status 1 when one is critical."""
    app = App(configure(args))
    environ = {"wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1"}
    try:
        inputs = app.health_inputs()
        results = [run_health_test(name, inputs, environ) for name in HEALTH_TESTS]
    finally:
        app.cache.close()
        app.auth.store.close()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            say(f"{result['status']:<12} {result['test']:<26} {result['label']}")
    return 1 if any(result["status"] == "critical" for result in results) else 0
