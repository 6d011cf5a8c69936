"""Property-based testing for plugin authors: strategies from schemas, and `check_routes`.

Needs hypothesis (``pip install sitecache[testing]``); ``import sitecache`` does not import this
package, so the rest of sitecache works without it.

- `from_schema` (``sitecache.testing.strategies``): a hypothesis strategy of values a schema
  accepts, the engine's coercions included (``"5"`` for an integer, ``"a,b"`` for an array).
- `invalid_from_schema`: a strategy of `Invalid` ``(value, code)`` pairs, values the schema
  rejects with the code of the rule they break (``rest_invalid_type``, ``rest_invalid_param``,
  ``rest_invalid_pattern``, ...).
- `check_routes`: every route and method of an application driven with requests drawn from
  the routes' ``args``; an `AssertionError` names the route, method and request that got a
  5xx, a wrong error code, or an answer its published schema does not allow.
"""

from sitecache.testing.invalid import Invalid, invalid_from_schema
from sitecache.testing.routes import RouteCheck, check_routes
from sitecache.testing.strategies import from_schema

__all__ = ["Invalid", "RouteCheck", "check_routes", "from_schema", "invalid_from_schema"]
