"""Log lines, written into GRW's log under the plugin's name.

Outside GRW (native unit tests) they go to stderr instead::

    from grw_sdk import log
    log.info(f"{count} objects seen")
"""

from __future__ import annotations

import sys
from enum import StrEnum

__all__ = ["Level", "log", "trace", "debug", "info", "warn", "error"]

#: Whether this runs inside a WebAssembly component (rather than natively).
IN_COMPONENT = sys.platform == "wasi"


class Level(StrEnum):
    """How important a log line is."""

    TRACE = "trace"
    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"


def log(level: Level | str, message: object) -> None:
    """Writes one log line at ``level``."""
    level = Level(level)
    if IN_COMPONENT:
        from wit_world.imports import log as host

        host.log(host.Level[level.name], str(message))
    else:
        print(f"[{level}] {message}", file=sys.stderr)


def trace(message: object) -> None:
    """Writes a trace line."""
    log(Level.TRACE, message)


def debug(message: object) -> None:
    """Writes a debug line."""
    log(Level.DEBUG, message)


def info(message: object) -> None:
    """Writes an info line."""
    log(Level.INFO, message)


def warn(message: object) -> None:
    """Writes a warning."""
    log(Level.WARN, message)


def error(message: object) -> None:
    """Writes an error line."""
    log(Level.ERROR, message)
