"""``python -m sitecache.cli``: the ``sitecache`` command (`sitecache.cli.main`)."""

from __future__ import annotations

import sys

from sitecache.cli import main

if __name__ == "__main__":
    sys.exit(main())
