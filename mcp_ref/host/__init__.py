"""The host: many MCP servers under one application, with consent.

An MCP host is the application a person uses (a chat app, an IDE); it creates
one client per server, decides what each may do, owns the model, and gives
the model one catalogue of everything the servers offer. No official SDK
ships one; this one is small so the whole of MCP can be seen working.

* config.py: the ``{"mcpServers": {...}}`` file hosts share.
* core.py: ``Host``: clients, catalogue, routing, sampling, health.
* consent.py: the consent hook, ``AllowList`` for scripts, ``TerminalPolicy``.
* loop.py: the tool-use loop and ``ScriptedModel``.

Spec: architecture, index#security-and-trust--safety.
"""
from mcp_ref.host.config import ConfigError, ServerConfig, load_config, parse_config
from mcp_ref.host.consent import AllowList, Consent, TerminalPolicy, allow_all, describe
from mcp_ref.host.core import Host, HostPrompt, HostResource, HostTemplate, HostTool
from mcp_ref.host.loop import ScriptedModel, ToolCall, run_conversation, run_tools

__all__ = ["Host", "HostTool", "HostPrompt", "HostResource", "HostTemplate", "ConfigError", "ServerConfig",
           "load_config", "parse_config", "Consent", "AllowList", "TerminalPolicy", "allow_all", "describe",
           "ScriptedModel", "ToolCall", "run_conversation", "run_tools"]
