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
        return f"run {env}{shlex.join(self.argv)}{where}"


def _value(name: str, entry: dict, key: str, kind, what: str, default=None, items=None):
    """``entry[key]`` (``default`` when absent or null), of type ``kind`` (its items of type ``items``)."""
    value = entry.get(key)
    if value is None:
        return default
    members = () if items is None else value.values() if isinstance(value, dict) else value
    if not isinstance(value, kind) or isinstance(value, bool) or not all(isinstance(v, items) for v in members):
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
    restarts = _value(name, entry, "autoRestart", int, "a whole number >= 0", 0)
    roots = _value(name, entry, "roots", list, "a list of file URIs or paths")
    config = ServerConfig(name, disabled=bool(entry.get("disabled", False)), auto_restart=restarts,
                          roots=None if roots is None else list(roots))
    if restarts < 0:
        raise ConfigError(f"server {name!r}: 'autoRestart' must be a whole number >= 0, not {restarts}")
    if has_command:
        config.command = _value(name, entry, "command", str, "a non-empty string", "")
        if not config.command:
            raise ConfigError(f"server {name!r}: 'command' is empty")
        config.args = list(_value(name, entry, "args", list, "a list of strings", [], str))
        config.env = dict(_value(name, entry, "env", dict, "an object of strings", {}, str))
        config.cwd = _value(name, entry, "cwd", str, "a string")
        return config
    config.url = _value(name, entry, "url", str, "a string", "")
    if not config.url.startswith(("http://", "https://")):
        raise ConfigError(f"server {name!r}: 'url' must start with http:// or https://, not {config.url!r}")
    config.headers = dict(_value(name, entry, "headers", dict, "an object of strings", {}, str))
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
            return parse_config(json.load(f))
    except OSError as exc:
        raise ConfigError(f"cannot read the configuration {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
