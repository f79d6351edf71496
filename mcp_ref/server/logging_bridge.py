"""A bridge from Python's ``logging`` module to ``notifications/message``
(``Server.bridge_logging``), in its own module so that a server that does not
bridge never imports ``logging`` (a stdio server's start-up and peak RSS).

Spec: server/utilities/logging (every revision), #security.

Rules:

1. The bridge maps Python levels to MCP levels; a record logged while a
   request is being handled goes to that request's session only, others to
   every session. It never logs about itself (no recursion).
2. The bridge sends a record's message only: never its traceback
   (``exc_info``) or stack (``stack_info``), which would show the client the
   server's code, paths and values (Spec: server/utilities/logging#security:
   log messages MUST NOT contain internal system details). The full record
   stays in the server's own log: the logger's other handlers get it as
   before, and when the bridge is the only handler, it hands the record to
   ``logging.lastResort`` (stderr, WARNING and above), as Python would have
   without the bridge.
"""
from __future__ import annotations

import copy
import logging
import threading

from mcp_ref.errors import SessionError
from mcp_ref.server.utilities import current

__all__ = ["LoggingBridge"]


# Python level (at least) -> MCP level, most severe first.
_PYTHON_LEVELS = ((logging.CRITICAL, "critical"), (logging.ERROR, "error"), (logging.WARNING, "warning"),
                  (logging.INFO, "info"), (0, "debug"))


class LoggingBridge(logging.Handler):
    """A ``logging.Handler`` that sends records as ``notifications/message`` (rule 1).
    Install it with ``server.bridge_logging()``."""

    def __init__(self, server, level: int = logging.INFO):
        super().__init__(level)
        self.server = server
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._busy, "on", False):
            return                                  # a record logged while sending one
        self._busy.on = True
        try:
            level = next(name for number, name in _PYTHON_LEVELS if record.levelno >= number)
            bare = copy.copy(record)                # rule 2: a copy the formatter turns into the message alone
            bare.exc_info = bare.exc_text = bare.stack_info = None
            message = self.format(bare)
            ctx = getattr(current, "ctx", None)
            if ctx is not None and ctx.session.server is self.server:
                ctx.log(level, message, logger=record.name)
            else:
                self.server.log(level, message, logger=record.name)
        except SessionError:
            pass                                    # the session closed meanwhile
        except Exception:
            self.handleError(record)
        finally:
            self._busy.on = False
        if not _other_handlers(record) and not getattr(record, "_mcp_ref_last_resort", False):
            record._mcp_ref_last_resort = True      # once, whatever the number of bridges
            last = logging.lastResort
            if last is not None and record.levelno >= last.level:
                last.handle(record)                 # rule 2: the server's own log (stderr)


def _other_handlers(record: logging.LogRecord) -> bool:
    """Does a handler other than a bridge see ``record``, as ``Logger.callHandlers`` walks?"""
    logger: logging.Logger | None = logging.getLogger(record.name)     # "root": the root logger
    while logger is not None:
        if any(not isinstance(handler, LoggingBridge) for handler in logger.handlers):
            return True
        if not logger.propagate:
            return False
        logger = logger.parent
    return False
