"""What the command line shows of the wire, and how it reaches a server.

Rules:

1. A target is ``--stdio "command args"`` (spawned, with ``--env K=V``
   added to its safe environment), ``--url URL`` (Streamable HTTP, falling
   back to legacy HTTP+SSE), or ``--config FILE --server NAME`` (an entry of
   the shared ``mcpServers`` file). All three go through one ``Host``
   holding one server, so the CLI and the host start servers the same way.
2. ``--trace`` prints every JSON-RPC message on stderr as it crosses:
   time, server (and HTTP session id once known), direction (``->`` sent,
   ``<-`` received), and the message as one line of JSON. stdout keeps the
   command's output only, so ``--json`` output stays parseable.
3. Progress goes to stderr as a bar redrawn in place (``\\r``), plain text,
   ended by a newline before anything else is printed.
4. The demos' lines fit the terminal (a ``Transcript``'s ``width``: its columns,
   ``COLUMNS`` overriding as for any terminal program, or
   ``FALLBACK_WIDTH`` when the output is not a terminal, never under
   ``MIN_WIDTH``). ``fit`` cuts a longer message where a visible
   ``…[+N chars]`` says how much is left out; ``Transcript.comment`` breaks a
   long ``#`` comment into ``#`` lines. (``--full`` prints messages whole: no ``fit``.)
5. The demos print through one ``Transcript``: ``sender -> receiver  {json}``
   per message, base64 data elided (``<N chars of base64>``) unless ``full``,
   and ``# ...`` comments; the demo, the scenarios and ``demo --host`` alike.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import textwrap
import threading
from contextlib import contextmanager
from datetime import datetime

from mcp_ref.host import ConfigError, Host, ServerConfig, load_config

__all__ = ["trace", "ProgressBar", "Transcript", "connect", "target_config", "fit", "child_env", "as_data", "pairs"]

FALLBACK_WIDTH = 100    # columns when the output is not a terminal (rule 4)
MIN_WIDTH = 60          # narrower terminals still get this much of each line
_BASE64 = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
_DATA_URI = re.compile(r"(data:[^,;]*;base64,)(.{40,})", re.S)


def fit(prefix: str, body: str, width: int) -> str:
    """``prefix + body`` in ``width`` characters: a longer ``body`` is cut, and ends with
    `` …[+N chars]`` saying how many characters were left out (rule 4)."""
    room = width - len(prefix)
    if len(body) <= room:
        return prefix + body
    keep = max(0, room - len(f" …[+{len(body)} chars]"))      # N has at most as many digits
    return f"{prefix}{body[:keep]} …[+{len(body) - keep} chars]"


def as_data(message):
    """A message (or a batch) as the JSON data it is on the wire (data stays as it is)."""
    if isinstance(message, list):
        return [as_data(m) for m in message]
    return message if isinstance(message, dict) else message.to_dict()


def child_env() -> dict:
    """A spawned example server imports mcp_ref from where this process found it: it gets only
    a safe set of our environment (transports/process.py rule 1), so the directory holding the
    package goes first on its ``PYTHONPATH``."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {"PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}


def _elide(value):
    """``value`` with base64 strings (image, audio, blob, data: URIs) replaced by their length
    (a method name such as notifications/subscriptions/acknowledged is never one)."""
    if isinstance(value, dict):
        return {key: item if key == "method" else _elide(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_elide(item) for item in value]
    if isinstance(value, str):
        uri = _DATA_URI.fullmatch(value)
        if uri:
            return f"{uri.group(1)}<{len(uri.group(2))} chars of base64>"
        if _BASE64.fullmatch(value):
            return f"<{len(value)} chars of base64>"
    return value


class Transcript:
    """Rule 5: prints each message as it crosses the wire, shortened to ``width`` (the
    terminal's, by default) unless ``full``. Lines come from the calling thread (sent)
    and the reading thread (received). Called as a tap: ``send`` is client -> server.
    ``entries`` keeps what was printed, in order, for ``demo --html`` (sequence.py rule 1):
    ``("message", sender, receiver, data)``, ``("note", text)`` and ``("line", text)``."""

    def __init__(self, full: bool = False, out=None, width: int | None = None):
        self.full, self.out = full, out or sys.stdout
        self.width = width or max(MIN_WIDTH, shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns)   # rule 4
        self.lock = threading.Lock()
        self.entries: list = []

    def emit(self, line: str, entry: tuple | None = None) -> None:
        with self.lock:
            if entry or line.strip():
                self.entries.append(entry or ("line", line))
            self.out.write(line + "\n")
            self.out.flush()

    def comment(self, text: str, prefix: str = "# ") -> None:
        """A ``# text`` line, wrapped into lines of at most the width, each starting with ``prefix`` (rule 4)."""
        lines = textwrap.wrap(text, self.width, initial_indent=prefix, subsequent_indent=prefix,
                              break_long_words=False, break_on_hyphens=False)
        self.emit("\n".join(lines or [prefix.rstrip()]), ("note", text))

    def relay(self, sender: str, receiver: str, message) -> None:
        """One message between two named participants (client and server, a host and its servers)."""
        arrow, data = f"{sender} -> {receiver}  ", as_data(message)
        self.emit(arrow + json.dumps(data, ensure_ascii=False) if self.full
                  else fit(arrow, json.dumps(_elide(data), ensure_ascii=False), self.width),
                  ("message", sender, receiver, data))

    def __call__(self, direction: str, message) -> None:
        self.relay(*(("client", "server") if direction == "send" else ("server", "client")), message)

    def host(self, server: str, direction: str, message, session_id=None) -> None:
        """``Host(trace=...)`` printing ``host -> server  {json}`` and ``server -> host  {json}``."""
        self.relay(*(("host", server) if direction == "send" else (server, "host")), message)

    def messages(self) -> list:
        return [entry for entry in self.entries if entry[0] == "message"]


_TRACE_LOCK = threading.Lock()


def trace(server: str, direction: str, message, session_id=None) -> None:
    """``Host(trace=...)`` on stderr (rule 2), one line a message, from any thread."""
    stamp = datetime.now().strftime("%H:%M:%S.%f")[:-3]             # to the millisecond
    where = server + (f" session={session_id}" if session_id else "")
    arrow = "->" if direction == "send" else "<-"
    with _TRACE_LOCK:
        ProgressBar.interrupt()
        sys.stderr.write(f"{stamp} [{where}] {arrow} {json.dumps(as_data(message), ensure_ascii=False)}\n")
        sys.stderr.flush()


class ProgressBar:
    """``on_progress(progress, total, message)`` drawing on stderr (rule 3); one bar at a time."""

    WIDTH = 30
    shown = 0                   # the length of the bar's unfinished line on stderr; 0: none

    @classmethod
    def interrupt(cls) -> None:
        """End the bar's unfinished line before another stderr line (the trace, a log) is written."""
        if cls.shown:
            sys.stderr.write("\n")
            cls.shown = 0

    def __call__(self, progress, total=None, message=None) -> None:
        if total:
            filled = int(self.WIDTH * max(0.0, min(1.0, progress / total)))
            line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {progress:g}/{total:g}"
        else:
            line = f"[progress {progress:g}]"
        line += f" {message}" if message else ""
        sys.stderr.write("\r" + line + " " * max(0, ProgressBar.shown - len(line)))    # spaces cover a longer line
        sys.stderr.flush()
        ProgressBar.shown = len(line)


def pairs(items, what: str) -> dict:
    """``KEY=VALUE`` words as a dict of strings (``--env``, ``--header``, ``complete --context``)."""
    result = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{what} must be KEY=VALUE, not {item!r}")
        result[key] = value
    return result


def target_config(args) -> ServerConfig:
    """The one server the command talks to (rule 1); ``ConfigError`` when the target is unclear."""
    given = [name for name in ("stdio", "url", "config") if getattr(args, name)]
    if len(given) != 1:
        raise ConfigError("give one target: --stdio \"command args\", --url URL, or --config FILE --server NAME"
                          + (f" (got {', '.join('--' + g for g in given)})" if given else ""))
    if args.stdio:
        argv = shlex.split(args.stdio)
        if not argv:
            raise ConfigError("--stdio needs a command line")
        return ServerConfig("server", command=argv[0], args=argv[1:], env=pairs(args.env, "--env"))
    if args.url:
        if not args.url.startswith(("http://", "https://")):
            raise ConfigError(f"--url must start with http:// or https://, not {args.url!r}")
        return ServerConfig("server", url=args.url, transport="auto", headers=pairs(args.header, "--header"))
    servers = load_config(args.config)
    if not args.server:
        raise ConfigError(f"--config needs --server NAME; {args.config} has: {', '.join(servers) or 'none'}")
    if args.server not in servers:
        raise ConfigError(f"no server {args.server!r} in {args.config}; it has: {', '.join(servers) or 'none'}")
    return servers[args.server]


@contextmanager
def connect(args, **client_options):
    """The client connected to the target, closed (its server stopped) on exit."""
    config = target_config(args)
    if args.root:
        config.roots = list(args.root)
    host = Host({config.name: config}, trace=trace if args.trace else None, protocol_version=args.protocol_version,
                timeout=args.timeout, client_info={"name": "mcp-ref", "version": "0.1.0"}, **client_options)
    try:
        yield host.start(strict=True).client(config.name)
    finally:
        host.close()
