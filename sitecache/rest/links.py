"""Serializing a response's links under ``_links``, with CURIEs.

A relation under a CURIE's base (``{api_root_rel}term``) is written compactly (``wp:term``) and
the CURIEs used are listed last under ``curies``; each link lists its attributes, then ``href``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sitecache.rest.response import RestResponse

__all__ = ["compact_links", "default_curies", "expand_links"]

TargetHints = Callable[[Mapping[str, Any]], dict[str, list[str]] | None]


def default_curies(api_root_rel: str) -> list[dict[str, Any]]:
    """The default CURIE ``wp`` over the API-root relation."""
    return [{"name": "wp", "href": f"{api_root_rel}{{rel}}", "templated": True}]


def expand_links(response: RestResponse, target_hints: TargetHints | None = None) -> dict[str, Any]:
    """Relation → list of link objects (attributes first, then ``href``).

    ``target_hints`` computes ``targetHints`` for ``self`` links (unless the link has its own).
    """
    expanded: dict[str, Any] = {}
    for rel, items in response.get_links().items():
        objects: list[dict[str, Any]] = []
        for item in items:
            link = {**item["attributes"], "href": item["href"]}
            if rel == "self" and target_hints is not None:
                own = link.get("targetHints")
                if not (isinstance(own, Mapping) and "allow" in own):
                    hints = target_hints(link)
                    if hints:
                        link["targetHints"] = hints
            objects.append(link)
        expanded[rel] = objects
    return expanded


def compact_links(
    response: RestResponse,
    curies: list[dict[str, Any]],
    target_hints: TargetHints | None = None,
) -> dict[str, Any]:
    """The ``_links`` object of ``response`` with relations compacted through ``curies``."""
    links = expand_links(response, target_hints)
    if not links:
        return {}
    used: dict[str, dict[str, Any]] = {}
    for rel in list(links):
        for curie in curies:
            href = str(curie.get("href", ""))
            prefix, marker, suffix = href.partition("{rel}")
            if not marker or not rel.startswith(prefix) or len(rel) <= len(prefix):
                continue
            if suffix and not rel.endswith(suffix):
                continue
            name = rel[len(prefix) : len(rel) - len(suffix)] if suffix else rel[len(prefix) :]
            compact = f"{curie['name']}:{name}"
            used[str(curie["name"])] = curie
            links[compact] = links.pop(rel)
            break
    if used:
        links["curies"] = list(used.values())
    return links
