"""The OpenAPI 3.1 document of a REST server, generated from its route registry.

Every route registered on ``rest_api_init`` (the core routes, the cache's, any plugin's) becomes
a path: its ``(?P<name>…)`` groups become path parameters, each handler's methods become
operations whose arguments are query parameters (GET, DELETE) or a JSON request body (POST,
PUT, PATCH), and the route's published resource schema (``schema=``) describes its successful
answers (an item or a list of items) and, for routes that declare no arguments and read their
JSON body against that schema (``site-cache/v1``), the writable fields of the request body.
Every operation may answer the one JSON error (``{code, message, data}``).

WordPress's schema dialect is translated on the way: ``readonly`` becomes ``readOnly``, a
property's ``required: true`` joins its parent's ``required`` list, and the keywords OpenAPI
does not know (``context``, ``arg_options``, callbacks) are left out. Served at
``GET /<rest_prefix>-openapi`` and printed by ``sitecache openapi``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from sitecache.rest.routes import Route

if TYPE_CHECKING:
    from sitecache.rest.server import RestServer

__all__ = ["ERROR_SCHEMA", "openapi_document", "openapi_path"]

#: The one JSON error every route may answer.
ERROR_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "data": {},
        "additional_errors": {"type": "array"},
    },
}

#: Schema keywords OpenAPI 3.1 (JSON Schema 2020-12) reads, kept as they are.
_KEPT: Final = frozenset(
    {
        "type", "enum", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
        "minProperties", "maxProperties", "multipleOf", "description", "title", "default",
        "const",
    }
)  # fmt: skip
#: WordPress formats whose meaning differs from JSON Schema's format of the same name: a
#: WordPress ``date-time`` may leave the time zone out (``2026-11-01T10:00:00``, read in the
#: site's time zone), so it becomes a description; a ``uri`` may be empty or hold
#: non-ASCII text (``""``, an IRI), an ``iri-reference``.
_FORMATS: Final[Mapping[str, str | None]] = {"date-time": None, "uri": "iri-reference"}
_BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH"})
_OPERATIONS: Final = ("GET", "POST", "PUT", "PATCH", "DELETE")


def openapi_path(pattern: str) -> tuple[str, list[str]] | None:
    """``/site/v2/posts/{id}`` and the parameter names of a route pattern, or ``None`` when
    the pattern holds regular-expression syntax outside its named groups (not a path)."""
    out: list[str] = []
    names: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("(?P<", index):
            end_name = pattern.index(">", index)
            names.append(pattern[index + 4 : end_name])
            out.append("{" + names[-1] + "}")
            index = _group_end(pattern, index)
            continue
        char = pattern[index]
        if char in "\\()[]{}?*+|^$.":
            return None
        out.append(char)
        index += 1
    return "".join(out), names


def _group_end(pattern: str, start: int) -> int:
    """The index after the group opening at ``start`` (escapes and classes skipped)."""
    depth = 0
    index = start
    in_class = False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return index


def to_openapi_schema(schema: Any, *, answer: bool = False) -> dict[str, Any]:
    """A WordPress-style argument or resource schema in OpenAPI 3.1's words (see the module
    docstring); for an ``answer`` a property's ``required`` (required when creating) is left
    out, as WordPress's answers do not promise it."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {key: value for key, value in schema.items() if key in _KEPT}
    form = out.get("format")
    if isinstance(form, str) and form in _FORMATS:
        translated = _FORMATS[form]
        if translated is None:
            del out["format"]
            out["x-wordpress-format"] = form
        else:
            out["format"] = translated
    if schema.get("readonly") or schema.get("readOnly"):
        out["readOnly"] = True
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = to_openapi_schema(items, answer=answer)
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {
            name: to_openapi_schema(value, answer=answer) for name, value in properties.items()
        }
        required = [
            name
            for name, value in properties.items()
            if isinstance(value, Mapping) and value.get("required") is True
        ]
        if required and not answer:
            out["required"] = required
    extra = schema.get("additionalProperties")
    if isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif isinstance(extra, Mapping):
        out["additionalProperties"] = to_openapi_schema(extra, answer=answer)
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if isinstance(options, list):
            out[keyword] = [to_openapi_schema(option, answer=answer) for option in options]
    return out


def _parameter(name: str, definition: Any, where: str) -> dict[str, Any]:
    definition = definition if isinstance(definition, Mapping) else {}
    schema = to_openapi_schema(definition)
    schema.pop("readOnly", None)
    parameter: dict[str, Any] = {"name": name, "in": where, "schema": schema}
    if where == "path" or definition.get("required") is True:
        parameter["required"] = True
    if schema.get("type") == "array" or "array" in (schema.get("type") or []):
        # WordPress reads a list as name[]=a&name[]=b or a comma-separated value; the plain
        # repeated form is what every client sends.
        parameter["style"] = "form"
        parameter["explode"] = True
    if "description" in schema:
        parameter["description"] = schema["description"]
    return parameter


def _request_body(args: Mapping[str, Any], resource: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON request body: the handler's arguments, or (a route reading its body against
    its resource schema) the schema's writable fields."""
    if args:
        body = to_openapi_schema({"type": "object", "properties": dict(args)})
    else:
        writable = {
            name: value
            for name, value in (resource.get("properties") or {}).items()
            if isinstance(value, Mapping) and not value.get("readonly")
        }
        body = to_openapi_schema(
            {"type": "object", "properties": writable, "additionalProperties": False}
        )
    return {"required": False, "content": {"application/json": {"schema": body}}}


def _operation(
    method: str, handler: Mapping[str, Any], names: list[str], resource: Mapping[str, Any] | None
) -> dict[str, Any]:
    args = {
        name: value
        for name, value in (handler.get("args") or {}).items()
        if name not in names and isinstance(value, Mapping)
    }
    path_args = handler.get("args") or {}
    operation: dict[str, Any] = {
        "parameters": [
            _parameter(name, path_args.get(name, {"type": "string"}), "path") for name in names
        ],
        "responses": {
            "default": {
                "description": "An error.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
            }
        },
    }
    if method in _BODY_METHODS:
        if args or resource is not None:
            operation["requestBody"] = _request_body(args, resource or {})
    else:
        operation["parameters"] += [
            _parameter(name, value, "query") for name, value in args.items()
        ]
    success: dict[str, Any] = {"description": "The answer."}
    if resource is not None and method != "DELETE":
        # An item, a list of items, or (types, statuses, taxonomies) an object of items.
        item = to_openapi_schema(resource, answer=True)
        listed = [item, {"type": "array", "items": item}]
        listed.append({"type": "object", "additionalProperties": item})
        success["content"] = {"application/json": {"schema": {"anyOf": listed}}}
    operation["responses"]["2XX"] = success
    return operation


def _route_operations(route: Route) -> dict[str, Any]:
    converted = openapi_path(route.pattern)
    if converted is None:
        return {}
    _, names = converted
    schema = route.options.get("schema")
    resource = schema() if callable(schema) else schema
    resource = resource if isinstance(resource, Mapping) else None
    operations: dict[str, Any] = {}
    for handler in route.handlers:
        if not handler.get("show_in_index", True):
            continue
        for method in handler["methods"]:
            if method in _OPERATIONS and method.lower() not in operations:
                operation = _operation(method, handler, names, resource)
                operation["operationId"] = f"{method.lower()} {route.pattern}"
                operation["tags"] = [route.namespace or "index"]
                operations[method.lower()] = operation
    return operations


def openapi_document(server: RestServer) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route of ``server`` (``rest_api_init`` is fired
    first when it has not been)."""
    server.ensure_initialized()
    settings = server.settings
    prefix = "/" + settings.prefix.strip("/")
    paths: dict[str, Any] = {}
    for pattern, route in server.get_routes().items():
        converted = openapi_path(pattern)
        operations = _route_operations(route)
        if converted is None or not operations:
            continue
        path = prefix + (converted[0] if converted[0] != "/" else "/")
        paths[path] = operations
    return {
        "openapi": "3.1.0",
        "info": {
            "title": f"{settings.site_name} REST API",
            "version": "1",
            "description": settings.site_description,
        },
        "servers": [{"url": server.home_url().rstrip("/") or "/"}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA},
            "securitySchemes": {
                "applicationPassword": {"type": "http", "scheme": "basic"},
            },
        },
        "security": [{}, {"applicationPassword": []}],
    }
