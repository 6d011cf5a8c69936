"""The ``sitecache`` command line.

``sitecache serve`` runs the site under gunicorn. Configuration comes from the environment as
for ``create_app()`` (``SITECACHE_CONFIG``, ``SITECACHE_DATA_DIR``, ...), or from ``--config``
and ``--data-dir``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from sitecache.config import Config, ConfigError, load_config

__all__ = ["main"]

Command = Callable[[argparse.Namespace], int]


def _configure_environment(args: argparse.Namespace) -> Config:
    """Apply ``--config``/``--data-dir`` to the environment and load the configuration."""
    if getattr(args, "config", None):
        os.environ["SITECACHE_CONFIG"] = str(Path(args.config).resolve())
    if getattr(args, "data_dir", None):
        os.environ["SITECACHE_DATA_DIR"] = str(Path(args.data_dir).resolve())
    return load_config()


def command_serve(args: argparse.Namespace) -> int:
    """Run gunicorn serving ``sitecache.app:create_app()`` (replaces this process)."""
    config = _configure_environment(args)
    config.data_dir.mkdir(parents=True, exist_ok=True)
    # gunicorn re-reads the environment in each worker, so pin the resolved data directory.
    os.environ["SITECACHE_DATA_DIR"] = str(config.data_dir.resolve())
    argv = [
        sys.executable, "-m", "gunicorn",
        "--bind", args.bind,
        "--workers", str(args.workers),
        "--access-logfile", "-",
        "sitecache.app:create_app()",
    ]  # fmt: skip
    if args.reload:
        argv.insert(3, "--reload")
    print(f"sitecache: serving {config.data_dir.resolve()} on http://{args.bind}/", flush=True)
    os.execv(sys.executable, argv)  # noqa: S606 - our own interpreter with fixed arguments


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="sitecache", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a TOML configuration file (else $SITECACHE_CONFIG)")
    parser.add_argument("--data-dir", help="the data directory (else $SITECACHE_DATA_DIR or ./var)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the site under gunicorn")
    serve.add_argument("--bind", default="127.0.0.1:8000", help="address (default 127.0.0.1:8000)")
    serve.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.set_defaults(handler=command_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except ConfigError as exc:
        print(f"sitecache: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
