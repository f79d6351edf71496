"""The server-configuration file MCP hosts share, read and checked.

The format (used by desktop hosts and editors alike)::

    {"mcpServers": {
        "files":   {"command": "python", "args": ["-m", "files_server"], "env": {"ROOT": "."}, "cwd": "."},
        "weather": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

Rules:

1. A server is either local (``command``, with optional ``args``, ``env``,
   ``cwd``: spawned over stdio) or remote (``url``, with optional
   ``headers`` and ``transport``: ``"http"``/``"streamable-http"``, ``"sse"``
   for the legacy HTTP+SSE transport, or absent to try Streamable HTTP and
   fall back). Anything else is a ``ConfigError`` naming the server and the
   key, raised before any process starts.
2. A server's name is a key of the catalogue's qualified names
   (``files__read``; host.py rule 2), so it must be non-empty, hold only
   letters, digits, ``-`` and single ``_``, and not start or end with ``_``:
   then ``name + "__" + tool`` never collides across servers.
3. Extra keys mcp_ref understands: ``roots`` (the roots this server may
   see), ``autoRestart`` (a stdio server respawned that many times in a
   row), ``disabled`` (skipped). Unknown keys are ignored, as other hosts
   add their own.

This module does no I/O beyond reading the file. Spec: basic/transports.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional

__all__ = ["ConfigError", "ServerConfig", "load_config", "parse_config", "SEPARATOR"]

SEPARATOR = "__"         # between a server's name and a tool or prompt name (rule 2)
_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
_TRANSPORTS = {None: "auto", "auto": "auto", "http": "http", "streamable-http": "http", "streamableHttp": "http",
               "sse": "sse"}


class ConfigError(ValueError):
    """The configuration is not usable (rule 1); the message names the server and the key."""


@dataclass
class ServerConfig:
    """One entry of ``mcpServers`` (rule 1)."""
    name: str
    command: Optional[str] = None
    args: list = field(default_factory=list)
    env: dict = field(default_factory=dict)
    cwd: Optional[str] = None
    url: Optional[str] = None
    headers: dict = field(default_factory=dict)
    transport: str = "stdio"
    roots: Optional[list] = None
    auto_restart: int = 0
    disabled: bool = False

    @property
    def argv(self) -> list:
        """The command line a stdio server is started with."""
        return [self.command] + list(self.args)

    def describe(self) -> str:
        """What is started or reached, as a person reads it (the launch consent shows it): the
        whole command line, never shortened (security_best_practices#local-mcp-server-compromise);
        environment variables by name only, since their values are often secrets."""
        if self.url is not None:
            return f"connect to {self.url} ({self.transport})"
        import shlex
        where = f" in {self.cwd}" if self.cwd else ""
        env = "".join(f"{key}=… " for key in sorted(self.env))
        return f"run {env}{' '.join(shlex.quote(part) for part in self.argv)}{where}"


def _check(name: str, key: str, value, kinds, what: str):
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise ConfigError(f"server {name!r}: {key!r} must be {what}, not {value!r}")
    return value


def _server(name, entry: dict) -> ServerConfig:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"server name {name!r}: use letters, digits, '-' and single '_' (not first or last), "
                          f"so that qualified names like {str(name)}{SEPARATOR}tool cannot collide")
    if not isinstance(entry, dict):
        raise ConfigError(f"server {name!r}: the entry must be an object, not {entry!r}")
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ConfigError(f"server {name!r}: give either 'command' (stdio) or 'url' (HTTP), "
                          f"{'not both' if has_command else 'found neither'}")
    config = ServerConfig(name)
    config.disabled = bool(entry.get("disabled", False))
    if "roots" in entry:
        config.roots = list(_check(name, "roots", entry["roots"], list, "a list of file URIs or paths"))
    config.auto_restart = _check(name, "autoRestart", entry.get("autoRestart", 0), int, "a whole number >= 0")
    if config.auto_restart < 0:
        raise ConfigError(f"server {name!r}: 'autoRestart' must be a whole number >= 0, not {config.auto_restart}")
    if has_command:
        config.command = _check(name, "command", entry["command"], str, "a string")
        if not config.command:
            raise ConfigError(f"server {name!r}: 'command' is empty")
        config.args = list(_check(name, "args", entry.get("args", []), list, "a list of strings"))
        if not all(isinstance(arg, str) for arg in config.args):
            raise ConfigError(f"server {name!r}: 'args' must be a list of strings, not {config.args!r}")
        config.env = dict(_check(name, "env", entry.get("env") or {}, dict, "an object of strings"))
        if not all(isinstance(v, str) for v in config.env.values()):
            raise ConfigError(f"server {name!r}: 'env' values must be strings")
        config.cwd = entry.get("cwd")
        if config.cwd is not None:
            _check(name, "cwd", config.cwd, str, "a string")
        return config
    config.url = _check(name, "url", entry["url"], str, "a string")
    if not config.url.startswith(("http://", "https://")):
        raise ConfigError(f"server {name!r}: 'url' must start with http:// or https://, not {config.url!r}")
    config.headers = dict(_check(name, "headers", entry.get("headers") or {}, dict, "an object of strings"))
    transport = entry.get("transport", entry.get("type"))
    if transport not in _TRANSPORTS:
        raise ConfigError(f"server {name!r}: 'transport' must be one of http, streamable-http, sse, "
                          f"not {transport!r}")
    config.transport = _TRANSPORTS[transport]
    return config


def parse_config(data) -> dict:
    """``{name: ServerConfig}`` from the parsed JSON (rule 1); ``ConfigError`` when unusable."""
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers"), dict):
        raise ConfigError('the configuration must be an object with "mcpServers": {name: {...}}')
    return {name: _server(name, entry) for name, entry in data["mcpServers"].items()}


def load_config(path) -> dict:
    """Read and check the file at ``path``; ``ConfigError`` (with the path) when unusable."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from None
    try:
        return parse_config(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
