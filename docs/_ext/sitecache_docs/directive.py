"""One directive class for every generated reference: it looks its generator up by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sitecache_docs.generated import Generated
from sitecache_docs.hooks import hooks_reference
from sitecache_docs.references import (
    cache_status_reference,
    cli_reference,
    config_reference,
    error_codes_reference,
    metrics_reference,
    settings_reference,
    stats_reference,
    status_reference,
)
from sitecache_docs.routes import rest_routes_reference

logger = logging.getLogger(__name__)

#: directive name -> the generator of its Markdown (given the directive's argument)
GENERATORS: Final[dict[str, Callable[[str], Generated]]] = {
    "sitecache-config": lambda argument: config_reference(),
    "sitecache-settings": lambda argument: settings_reference(),
    "sitecache-stats": lambda argument: stats_reference(),
    "sitecache-status": lambda argument: status_reference(),
    "sitecache-metrics": lambda argument: metrics_reference(),
    "sitecache-cache-status": lambda argument: cache_status_reference(),
    "sitecache-cli": lambda argument: cli_reference(),
    "sitecache-errors": lambda argument: error_codes_reference(),
    "sitecache-routes": rest_routes_reference,
    "sitecache-hooks": lambda argument: hooks_reference(),
}


class GeneratedDirective(SphinxDirective):
    """``{sitecache-NAME} [argument]``: the generated Markdown of NAME, parsed in place; each
    drift the generator reports is a warning (an error under ``-W``)."""

    optional_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        """The nodes of the generated section."""
        generated = GENERATORS[self.name](self.arguments[0] if self.arguments else "")
        for problem in generated.problems:
            logger.warning(
                "the %s reference drifted from the code: %s",
                self.name,
                problem,
                location=self.get_location(),
            )
        return self.parse_text_to_nodes(generated.text)
