"""The REST routes of a namespace, from the OpenAPI document of a real application.

The application is built at build time on a temporary data directory (the same routes every
site has: the core ``site/v2`` routes and the page cache's ``site-cache/v1``), and its document
is `sitecache.rest.openapi.openapi_document`'s: what ``GET /site-json-openapi`` serves.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Mapping
from typing import Any

from sitecache_docs.generated import Generated, code, table

__all__ = ["openapi", "rest_routes_reference"]

#: namespaces whose every request field must say what it is (ours; WordPress's are as it has them)
_OWN_NAMESPACES = ("site-cache/v1",)


@functools.cache
def openapi() -> dict[str, Any]:
    """The OpenAPI document of a fresh application (built once per build)."""
    from sitecache import create_app
    from sitecache.rest.openapi import openapi_document

    with tempfile.TemporaryDirectory(prefix="sitecache-docs-") as data_dir:
        app = create_app({"data_dir": data_dir, "cache_timers": False, "password_hash_cost": 1024})
        try:
            return openapi_document(app.server)
        finally:
            app.close()


def _type_of(schema: Mapping[str, Any]) -> str:
    kinds = schema.get("type", "")
    text = " or ".join(kinds) if isinstance(kinds, list) else str(kinds or "any")
    if "enum" in schema:
        text += ": " + ", ".join(code(json.dumps(v)) for v in schema["enum"][:12])
        if len(schema["enum"]) > 12:
            text += ", ..."
    return text


def rest_routes_reference(namespace: str) -> Generated:
    """Every route of ``namespace`` (``site/v2``, ``site-cache/v1``): its methods and the
    arguments of each (query, path or JSON body)."""
    document = openapi()
    prefix = next(iter(document["paths"]), "/site-json/").split("/")[1]
    base = f"/{prefix}/{namespace}"
    problems: list[str] = []
    parts: list[str] = []
    paths = {
        p: item for p, item in document["paths"].items() if p == base or p.startswith(base + "/")
    }
    if not paths:
        return Generated("", [f"no route is registered under {namespace!r}"])
    for path, item in paths.items():
        methods = ", ".join(method.upper() for method in item)
        parts.append(f"\n**{methods} `{path}`**\n")
        rows = []
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                rows.append((method.upper(), code(parameter["name"]), parameter["in"],
                             _type_of(schema), parameter.get("description", "")))  # fmt: skip
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            properties = body.get("schema", {}).get("properties", {})
            for name, schema in properties.items():
                if schema.get("readOnly"):
                    continue
                rows.append((method.upper(), code(name), "body", _type_of(schema),
                             schema.get("description", "")))  # fmt: skip
        for row in rows:
            if namespace in _OWN_NAMESPACES and path != base and not str(row[4]).strip():
                problems.append(f"{row[0]} {path} argument {row[1]} has no description")
        if rows:
            parts.append("\n" + table(("method", "argument", "in", "type", "meaning"), rows))
        else:
            parts.append("\nNo arguments.\n")
    return Generated("".join(parts), problems)
