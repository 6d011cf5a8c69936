"""`RestRequest`: one REST request, its parameter sources, headers, body and handler attributes.

Mirrors ``WP_REST_Request``. Parameters come from five sources, read in priority order
JSON > POST (form body) > GET (query) > URL (route captures) > defaults; JSON only
when the Content-Type is a JSON media type, POST only for POST, PUT, PATCH and DELETE.
`has_valid_params` and `sanitize_params` apply the matched handler's argument definitions.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from sitecache.bounded_memo import BoundedMemo
from sitecache.errors import RestError
from sitecache.rest.authentication import ANONYMOUS, User
from sitecache.rest.json_body import decode_json_body
from sitecache.rest.params import is_json_media_type, parse_content_type, parse_query_string
from sitecache.schema.arguments import (
    parse_request_arg,
    sanitize_request_arg,
    validate_request_arg,
)
from sitecache.schema.compiled import CompiledSchema

__all__ = ["ARG_RESULTS", "ARG_RESULTS_KEPT", "COMPILED_ARGS", "RestRequest"]

COMPILED_ARGS: Final = "compiled_args"
"""The handler attribute holding each argument definition's `CompiledSchema` by name (set when
the route is registered). The default argument callbacks run through it."""
ARG_RESULTS: Final = "compiled_arg_results"
"""The handler attribute holding the default callbacks' kept results for text values
(``(callback kind, name, value)`` → ``(argument definition, result)``;
`RestRequest._text_arg`), made at registration."""
ARG_RESULTS_KEPT: Final = 256
"""Most results kept per handler (all are dropped at once beyond)."""
ARG_RESULT_MAX_TEXT: Final = 200
"""The longest text value whose result is kept (the memo stays small whatever clients send)."""
_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None)})

SOURCES: Final = ("JSON", "POST", "GET", "URL", "defaults", "FILES")
BODY_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_UNSET: Any = object()


def canonical_header_name(name: str) -> str:
    """``Content-Type`` and ``CONTENT_TYPE`` both become ``content_type``."""
    return name.lower().replace("-", "_")


def _as_params(value: Any) -> dict[str, Any]:
    """A decoded JSON body as a parameter source: objects as they are, anything else by index."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {str(index): item for index, item in enumerate(value)}
    if value is None:
        return {}
    return {"0": value}


class RestRequest:
    """A REST request.

    Args:
        method: the HTTP method (upper-cased).
        route: the route path, such as ``/site/v2/posts/1``.
        attributes: the matched handler's attributes (``args``, ``callback``, ...).
    """

    def __init__(
        self, method: str = "GET", route: str = "", attributes: Mapping[str, Any] | None = None
    ) -> None:
        self._order: list[str] | None = None
        self._method = method.upper()
        self.route = route
        self._attributes: dict[str, Any] = dict(attributes) if attributes else {}
        self._params: dict[str, dict[str, Any]] = {
            "JSON": {},
            "POST": {},
            "GET": {},
            "URL": {},
            "defaults": {},
            "FILES": {},
        }  # every one of SOURCES, in order
        self._headers: dict[str, list[str]] = {}
        self._body: bytes = b""
        self._parsed_json = False
        self._json_error: RestError | None = None
        self._json_value: Any = None
        self._parsed_body = False
        self.user: User = ANONYMOUS
        """The current user; the anonymous user (id 0) when nobody authenticated."""
        self.app_password: str | None = None
        """The uuid of the application password that authenticated the request, if any."""
        self.authentication_method: str | None = None
        """How the user was authenticated (``"cookie"``, ``"application_password"``, ...)."""
        self.refused_user: User = ANONYMOUS
        """The user of credentials that were valid but refused (a login cookie with a bad nonce).

        The refusal is answered for this user, as WordPress keeps them current: logged-in
        response headers (no ``Vary: Origin``). Nothing is ever dispatched as this user."""
        self.plain_permalinks = False
        """Whether the site has plain permalinks: `get_params` then leaves out ``rest_route``."""
        self.environ: Mapping[str, Any] = {}
        """The WSGI environ of the HTTP request this came from (empty for internal requests)."""
        self.memo: dict[str, Any] = {}
        """Results worked out once for this request object (permission verdicts, users read
        from the database); a copy or an internal request starts with its own."""

    # ------------------------------------------------------------------ method and route
    @property
    def method(self) -> str:
        """The (possibly overridden) HTTP method, upper-cased."""
        return self._method

    @method.setter
    def method(self, method: str) -> None:
        self._method = method.upper()
        self._order = None  # POST bodies count only for body methods

    def get_method(self) -> str:
        """The (possibly overridden) HTTP method."""
        return self.method

    def set_method(self, method: str) -> None:
        """Set the method (upper-cased)."""
        self.method = method

    def is_method(self, method: str) -> bool:
        """Case-insensitive comparison with the request's method."""
        return self.method == method.upper()

    def get_route(self) -> str:
        """The route path."""
        return self.route

    def set_route(self, route: str) -> None:
        """Set the route path."""
        self.route = route

    # ------------------------------------------------------------------ headers
    def get_headers(self) -> dict[str, list[str]]:
        """Every header, canonical name → list of values."""
        return {name: list(values) for name, values in self._headers.items()}

    def get_header(self, key: str) -> str | None:
        """The header's values joined with ``,``; ``None`` when absent."""
        values = self._headers.get(key.lower().replace("-", "_"))  # canonical_header_name
        return None if values is None else ",".join(values)

    def get_header_as_array(self, key: str) -> list[str] | None:
        """The header's values as a list; ``None`` when absent."""
        values = self._headers.get(canonical_header_name(key))
        return None if values is None else list(values)

    def set_header(self, key: str, value: str | list[str]) -> None:
        """Replace a header's values."""
        self._headers[canonical_header_name(key)] = (
            [value] if isinstance(value, str) else list(value)
        )
        self._order = None

    def add_header(self, key: str, value: str | list[str]) -> None:
        """Append values to a header."""
        values = [value] if isinstance(value, str) else list(value)
        self._headers.setdefault(canonical_header_name(key), []).extend(values)
        self._order = None

    def remove_header(self, key: str) -> None:
        """Remove a header."""
        self._headers.pop(canonical_header_name(key), None)
        self._order = None

    def set_headers(self, headers: Mapping[str, str | list[str]], override: bool = True) -> None:
        """Set several headers; with ``override`` the old set is dropped first."""
        if override:
            self._headers = {}
        kept = self._headers
        for key, value in headers.items():
            # set_header, without a call per header
            kept[key.lower().replace("-", "_")] = [value] if isinstance(value, str) else list(value)
        self._order = None

    def set_canonical_headers(self, headers: dict[str, list[str]]) -> None:
        """Replace every header with ``headers``, whose names are canonical already
        (`canonical_header_name`) and whose values are lists (kept, not copied)."""
        self._headers = headers
        self._order = None

    def get_content_type(self) -> dict[str, str] | None:
        """``{value, type, subtype, parameters}`` of the Content-Type header, or ``None``."""
        return parse_content_type(self.get_header("content_type"))

    def is_json_content_type(self) -> bool:
        """Whether the body is declared as JSON (``application/json``, ``…+json``)."""
        if "content_type" not in self._headers:
            return False  # most requests (every GET): no Content-Type, nothing to parse
        content_type = self.get_content_type()
        return content_type is not None and is_json_media_type(content_type["value"])

    # ------------------------------------------------------------------ body
    def get_body(self) -> bytes:
        """The raw body."""
        return self._body

    def set_body(self, body: bytes | str) -> None:
        """Set the raw body; JSON and form bodies are parsed again when next needed."""
        self._body = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
        self._parsed_json = False
        self._json_error = None
        self._json_value = None
        self._parsed_body = False
        self._params["JSON"] = {}
        self._order = None

    def _parse_json(self) -> RestError | None:
        """Decode a JSON body once; a malformed one is reported by `has_valid_params`."""
        if self._parsed_json:
            return self._json_error
        self._parsed_json = True
        if not self.is_json_content_type():
            return None
        body = self._body
        if not body or body == b"0":
            return None
        decoded, self._json_error = decode_json_body(body)
        if self._json_error is not None:
            return self._json_error
        self._json_value = decoded
        self._params["JSON"] = _as_params(decoded)
        return None

    def _parse_body(self) -> None:
        """Read a urlencoded body into the POST source for methods other than POST."""
        if self._parsed_body:
            return
        self._parsed_body = True
        content_type = self.get_content_type()
        if (
            content_type is not None
            and content_type["value"] != "application/x-www-form-urlencoded"
        ):
            return
        parsed = parse_query_string(self._body.decode("utf-8", "replace"))
        self._params["POST"] = {**parsed, **self._params["POST"]}

    def get_json_params(self) -> Any:
        """The decoded JSON body as it is (``json_decode``): a map, a list or a scalar.

        ``None`` when there is no JSON body, it is not declared as JSON, it is empty or ``0``, it
        is ``null`` or it does not decode. A JSON object is the parameter source itself, so
        `set_param` and `sanitize_params` show through, as in WordPress; the merged parameters
        read other values by index (`_as_params`).
        """
        self._parse_json()
        value = self._json_value
        if isinstance(value, dict) or (value is None and self._params["JSON"]):
            return self._params["JSON"]
        return value

    # ------------------------------------------------------------------ parameters
    def parameter_order(self) -> list[str]:
        """The sources consulted, highest priority first (``get_parameter_order``).

        Computed once and kept until the method, a header or the body changes.
        """
        if self._order is not None:
            return self._order
        order = []
        if self.is_json_content_type():
            order.append("JSON")
        self._parse_json()
        if self.method != "POST" and self._body:
            self._parse_body()
        if self.method in BODY_METHODS:
            order.append("POST")
        order.extend(("GET", "URL", "defaults"))
        self._order = order
        return order

    def get_param(self, key: str) -> Any:
        """The first non-null value of ``key`` in priority order, or ``None``."""
        params = self._params
        for source in self._order or self.parameter_order():
            value = params[source].get(key)
            if value is not None:
                return value
        return None

    def has_param(self, key: str) -> bool:
        """Whether any source has ``key`` (a null value counts)."""
        return any(key in self._params[source] for source in self.parameter_order())

    def get_params(self) -> dict[str, Any]:
        """Every parameter, merged so that higher-priority sources win."""
        merged: dict[str, Any] = {}
        for source in reversed(self.parameter_order()):
            merged.update(self._params[source])
        if self.plain_permalinks:
            merged.pop("rest_route", None)  # it addressed the route; it stays a query parameter
        return merged

    def set_param(self, key: str, value: Any) -> None:
        """Set ``key`` in every source that has it, else in the highest-priority source."""
        order = self.parameter_order()
        found = False
        for source in order:
            if source != "defaults" and key in self._params[source]:
                self._params[source][key] = value
                found = True
        if not found:
            self._params[order[0]][key] = value

    def remove_param(self, key: str) -> None:
        """Remove ``key`` from every source."""
        for source in self.parameter_order():
            self._params[source].pop(key, None)

    def get_url_params(self) -> dict[str, Any]:
        """Parameters captured from the route."""
        return self._params["URL"]

    def set_url_params(self, params: Mapping[str, Any]) -> None:
        """Set the route captures."""
        self._params["URL"] = dict(params)

    def get_query_params(self) -> dict[str, Any]:
        """Parameters from the query string."""
        return self._params["GET"]

    def set_query_params(self, params: Mapping[str, Any]) -> None:
        """Set the query-string parameters."""
        self._params["GET"] = dict(params)

    def get_body_params(self) -> dict[str, Any]:
        """Parameters from a form body."""
        return self._params["POST"]

    def set_body_params(self, params: Mapping[str, Any]) -> None:
        """Set the form-body parameters."""
        self._params["POST"] = dict(params)

    def get_file_params(self) -> dict[str, Any]:
        """Uploaded files: field name → `sitecache.rest.uploads.UploadedFile` (``$_FILES``)."""
        return self._params["FILES"]

    def set_file_params(self, params: Mapping[str, Any]) -> None:
        """Set the uploaded files."""
        self._params["FILES"] = dict(params)

    def get_default_params(self) -> dict[str, Any]:
        """The handler's default values."""
        return self._params["defaults"]

    def set_default_params(self, params: Mapping[str, Any]) -> None:
        """Set the handler's default values."""
        self._params["defaults"] = dict(params)

    def source(self, name: str) -> dict[str, Any]:
        """One parameter source by name (``JSON``, ``POST``, ``GET``, ``URL``, ``defaults``)."""
        if name == "JSON":
            self._parse_json()
        return self._params[name]

    # ------------------------------------------------------------------ attributes
    def get_attributes(self) -> dict[str, Any]:
        """The matched handler's attributes."""
        return self._attributes

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        """Set the matched handler's attributes."""
        self._attributes = dict(attributes)

    # ------------------------------------------------------------------ arguments
    def has_valid_params(self) -> bool | RestError:
        """``True``, or the first problem: malformed JSON, missing required arguments, then
        every argument's ``validate_callback``, then the route-level ``validate_callback``."""
        json_error = self._parse_json()
        if json_error is not None:
            return json_error
        args = self._attributes.get("args") or {}
        missing = [
            key
            for key, arg in args.items()
            if _is_mapping(arg) and arg.get("required") is True and self.get_param(key) is None
        ]
        if missing:
            return RestError(
                "rest_missing_callback_param",
                f"Missing parameter(s): {', '.join(missing)}",
                {"status": 400, "params": missing},
            )
        invalid: dict[str, str] = {}
        details: dict[str, Any] = {}
        for key, arg in args.items():
            if not _is_mapping(arg):
                continue
            validate = arg.get("validate_callback")
            if not validate:
                continue
            value = self.get_param(key)
            if value is None:
                continue
            result = self._run_arg_callback(validate, value, key, arg)
            if result is False:
                invalid[key] = "Invalid parameter."
            elif isinstance(result, RestError):
                invalid[key] = " ".join(result.get_error_messages())
                details[key] = result.to_dict()
        if invalid:
            return _invalid_params_error(invalid, details)
        route_validate = self._attributes.get("validate_callback")
        if route_validate:
            result = route_validate(self)
            if isinstance(result, RestError):
                return result
            if result is False:
                return RestError("rest_invalid_params", "Invalid parameters.", {"status": 400})
        return True

    def sanitize_params(self) -> bool | RestError:
        """Sanitize every present argument in every source, in place; ``True`` or the errors.

        An argument with a ``type`` and no ``sanitize_callback`` key is validated and sanitized
        by its own schema; an explicit ``None``/``False`` callback leaves the value alone.
        """
        args = self._attributes.get("args")
        if not args:
            return True
        invalid: dict[str, str] = {}
        details: dict[str, Any] = {}
        for source in self._order or self.parameter_order():
            params = self._params[source]
            if not params or params.keys().isdisjoint(args):
                continue  # nothing here has an argument definition
            for key in list(params):
                arg = args.get(key)
                if arg is None or not (arg.__class__ is dict or isinstance(arg, Mapping)):
                    continue
                callback = arg.get("sanitize_callback", _UNSET)
                if callback is _UNSET:
                    callback = parse_request_arg if arg.get("type") else None
                if not callback:
                    continue
                result = self._run_arg_callback(callback, params[key], key, arg)
                if isinstance(result, RestError):
                    invalid[key] = " ".join(result.get_error_messages())
                    details[key] = result.to_dict()
                else:
                    params[key] = result
        if invalid:
            return _invalid_params_error(invalid, details)
        return True

    def _run_arg_callback(self, callback: Any, value: Any, key: str, arg: Mapping[str, Any]) -> Any:
        """``callback(value, request, key)``; for the default callbacks, which apply the
        argument's own schema, the same result from the schema compiled at registration."""
        kind = _DEFAULT_CALLBACKS.get(callback)
        if kind is not None:
            if value.__class__ is str and len(value) <= ARG_RESULT_MAX_TEXT:
                return self._text_arg(kind, callback, value, key, arg)
            compiled = self._compiled_arg(key, arg)
            if compiled is not None:
                return _run_compiled(compiled, kind, value, key)
        return callback(value, self, key)

    def _text_arg(
        self, kind: str, callback: Any, value: str, key: str, arg: Mapping[str, Any]
    ) -> Any:
        """A default callback's result for the text ``value`` of argument ``key``, from the
        handler's memo of earlier results (`ARG_RESULTS`) when it has one for this very
        argument definition.

        The compiled schema is a pure function of the value (its notices come only from
        schemas it does not compile) and an accepted value's result does not depend on the
        parameter's name, so an accepted text value's result is kept when it is immutable
        (text, a number, a boolean, ``None``); errors and containers are worked out anew."""
        memo = self._attributes.get(ARG_RESULTS)
        if memo.__class__ is not BoundedMemo:
            memo = None
        else:
            kept = memo.get((kind, key, value))
            if kept is not None and kept[0] is arg:
                return kept[1]
        compiled = self._compiled_arg(key, arg)
        if compiled is None:
            return callback(value, self, key)
        result = _run_compiled(compiled, kind, value, key)
        if memo is not None and result.__class__ in _IMMUTABLE:
            memo.keep((kind, key, value), (arg, result))  # the definition it was worked out for
        return result

    def _compiled_arg(self, key: str, arg: Mapping[str, Any]) -> CompiledSchema | None:
        """The compiled form of ``arg`` when the handler has one for this very definition (the
        default callbacks read ``args[key]`` of the attributes, which is ``arg``)."""
        compiled = self._attributes.get(COMPILED_ARGS)
        found = compiled.get(key) if isinstance(compiled, dict) else None
        return found if found is not None and found.schema is arg else None

    # ------------------------------------------------------------------ mapping access
    def __getitem__(self, key: str) -> Any:
        return self.get_param(key)

    def __setitem__(self, key: str, value: Any) -> None:
        self.set_param(key, value)

    def __delitem__(self, key: str) -> None:
        self.remove_param(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get_param(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.get_params())

    def __repr__(self) -> str:
        return f"<RestRequest {self.method} {self.route}>"

    # ------------------------------------------------------------------ copying
    def copy(self) -> RestRequest:
        """A copy with its own parameter sources and headers (the user is shared)."""
        clone = RestRequest(self.method, self.route, self._attributes)
        clone._params = {source: dict(values) for source, values in self._params.items()}
        clone._headers = {name: list(values) for name, values in self._headers.items()}
        clone._body = self._body
        clone._parsed_json = self._parsed_json
        clone._json_error = self._json_error
        clone._json_value = self._json_value
        clone._parsed_body = self._parsed_body
        clone.user = self.user
        clone.app_password = self.app_password
        clone.authentication_method = self.authentication_method
        clone.plain_permalinks = self.plain_permalinks
        clone.environ = self.environ
        return clone


_DEFAULT_CALLBACKS: Final[dict[Any, str]] = {
    validate_request_arg: "validate",
    sanitize_request_arg: "sanitize",
    parse_request_arg: "parse",
}
"""The default argument callbacks, which a compiled schema answers, by kind."""


def _run_compiled(compiled: CompiledSchema, kind: str, value: Any, key: str) -> Any:
    """The default callback ``kind`` of `_DEFAULT_CALLBACKS` run by ``compiled``."""
    if kind == "validate":
        return compiled.validate(value, key)
    if kind == "sanitize":
        return compiled.sanitize(value, key)
    return compiled.parse(value, key)


def _is_mapping(value: object) -> bool:
    """``isinstance(value, Mapping)``, without the ABC machinery for a plain dict."""
    return value.__class__ is dict or isinstance(value, Mapping)


def _invalid_params_error(invalid: dict[str, str], details: dict[str, Any]) -> RestError:
    return RestError(
        "rest_invalid_param",
        f"Invalid parameter(s): {', '.join(invalid)}",
        {"status": 400, "params": invalid, "details": details},
    )
