"""The schema engine: WordPress-style JSON-Schema validation and sanitization, in pure Python.

Every public function mirrors the WordPress REST function of the same name without its
``rest_``/``wp_`` prefix, rule for rule, with WordPress's messages and eight error codes.
Where WordPress returns ``false`` these return ``False``; where it returns a ``WP_Error`` they
return a `sitecache.errors.RestError`. Python values stand for JSON values: ``dict`` is an
object, ``list`` an array.

This package is pure: it imports nothing from werkzeug and does no I/O. Misuse (a missing or
unknown ``type``, an invalid pattern) is reported through `sitecache.schema.notices`.

Example::

    >>> from sitecache.schema import validate_value_from_schema, sanitize_value_from_schema
    >>> schema = {"type": "array", "items": {"type": "integer", "minimum": 1}}
    >>> sanitize_value_from_schema("1, 2,3", schema, "ids")
    [1, 2, 3]
    >>> validate_value_from_schema("1,0", schema, "ids").message
    'ids[1] must be greater than or equal to 1'
"""

from sitecache.schema.arguments import (
    ALLOWED_SCHEMA_KEYWORDS,
    default_additional_properties_to_false,
    get_endpoint_args_for_schema,
    parse_request_arg,
    sanitize_request_arg,
    validate_request_arg,
)
from sitecache.schema.compiled import CompiledSchema, compile_schema
from sitecache.schema.dates import get_date_with_gmt, parse_date
from sitecache.schema.formats import (
    is_email,
    is_ip_address,
    is_uuid,
    parse_hex_color,
    sanitize_hex_color,
    sanitize_text_field,
    sanitize_textarea_field,
    sanitize_url,
)
from sitecache.schema.notices import SchemaMisuseWarning, report_misuse_to
from sitecache.schema.response_filters import (
    filter_response_by_context,
    filter_response_fields,
    is_field_included,
    parse_embed_param,
)
from sitecache.schema.sanitization import sanitize_value_from_schema
from sitecache.schema.types import (
    ALLOWED_TYPES,
    get_best_type_for_value,
    is_array,
    is_boolean,
    is_integer,
    is_object,
    sanitize_array,
    sanitize_boolean,
    sanitize_object,
)
from sitecache.schema.validation import validate_value_from_schema

__all__ = [
    "ALLOWED_SCHEMA_KEYWORDS",
    "ALLOWED_TYPES",
    "CompiledSchema",
    "SchemaMisuseWarning",
    "compile_schema",
    "default_additional_properties_to_false",
    "filter_response_by_context",
    "filter_response_fields",
    "get_best_type_for_value",
    "get_date_with_gmt",
    "get_endpoint_args_for_schema",
    "is_array",
    "is_boolean",
    "is_email",
    "is_field_included",
    "is_integer",
    "is_ip_address",
    "is_object",
    "is_uuid",
    "parse_date",
    "parse_embed_param",
    "parse_hex_color",
    "parse_request_arg",
    "report_misuse_to",
    "sanitize_array",
    "sanitize_boolean",
    "sanitize_hex_color",
    "sanitize_object",
    "sanitize_request_arg",
    "sanitize_text_field",
    "sanitize_textarea_field",
    "sanitize_url",
    "sanitize_value_from_schema",
    "validate_request_arg",
    "validate_value_from_schema",
]
