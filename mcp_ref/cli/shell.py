"""``mcp-ref shell TARGET``: an interactive inspector on stdlib ``cmd``.

Rules:

1. Each inspector command of commands.py is a shell command with the same
   arguments (``call echo message=hi``, ``read everything://readme``,
   ``log-level debug``, ``--json`` ...); ``help`` lists them. A bad line
   prints the usage and the shell goes on.
2. Tab completes tool, prompt and resource names (and URIs) from the
   server's lists, fetched again after its ``list_changed``; with readline,
   the history is kept in ``~/.mcp_ref_history``.
3. Notifications are shown live, as they arrive, one ``* method params``
   line each (log messages, list changes, resource updates, progress goes
   to the bar). ``subscribe URI`` returns at once; the updates then appear
   as notifications.
4. Ctrl-C during a request cancels it (``notifications/cancelled``) and
   returns to the prompt; Ctrl-D or ``quit`` leaves.

The class can be driven without a terminal: ``Shell(client, out).onecmd(line)``.
"""
from __future__ import annotations

import argparse
import cmd
import contextlib
import json
import os
import shlex
import sys
import threading
from types import ModuleType

from mcp_ref.cli.commands import COMMANDS, add_arguments, describe_error, parse

__all__ = ["Shell", "run_shell"]

HISTORY = os.path.join(os.path.expanduser("~"), ".mcp_ref_history")
# What tab completes after each command (rule 2): the list to fetch, and the field of each item that is its name.
_COMPLETES = {"call": ("list_tools", "name"), "prompt": ("list_prompts", "name"), "read": ("list_resources", "uri"),
              "subscribe": ("list_resources", "uri"), "unsubscribe": ("list_resources", "uri")}


class _Usage(Exception):
    """A bad command line (or -h): its message, if any, is printed and the shell goes on."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports instead of exiting (rule 1)."""

    def error(self, message):
        raise _Usage(f"{self.prog}: {message}")

    def exit(self, status=0, message=None):             # after -h (error, above, never comes here)
        raise _Usage("")


class Shell(cmd.Cmd):
    prompt = "mcp> "
    identchars = cmd.Cmd.identchars + "-"           # log-level is a command name

    def __init__(self, client, out=None):
        super().__init__(stdout=out or sys.stdout)
        self.client = client
        self.lock = threading.Lock()
        self._names: dict = {}                  # list method -> names for completion; cleared when stale
        self.intro = (f"connected to {client.server_info.name} {client.server_info.version} "
                      f"(protocol {client.protocol_version}); 'help' lists the commands, Ctrl-D leaves")
        client.on_notification = self.notification
        self.parsers = {name: add_arguments(_Parser(prog=name, description=text), name)
                        for name, (text, _, _) in COMMANDS.items()}

    # -- rule 3
    def notification(self, method: str, params) -> None:
        if method == "notifications/progress":
            return
        if method.endswith("/list_changed"):
            self._names.clear()
        shown = {k: v for k, v in (params or {}).items() if k != "_meta"}
        with self.lock:
            self.stdout.write(f"* {method} {json.dumps(shown, ensure_ascii=False)}\n")
            self.stdout.flush()

    # -- rule 1
    def default(self, line: str) -> None:
        self.stdout.write(f"unknown command {line.split()[0]!r}; 'help' lists the commands\n")

    def emptyline(self) -> bool:
        return False

    def run(self, name: str, line: str) -> None:
        try:
            args = parse(self.parsers[name], shlex.split(line))
            if name == "subscribe":
                self.client.subscribe_resource(args.uri)
                self.stdout.write(f"subscribed to {args.uri}; updates appear as notifications\n")
                return
            COMMANDS[name][2](self.client, args, self.stdout)
        except _Usage as usage:
            if str(usage):
                self.stdout.write(f"{usage}\n")
        except Exception as exc:      # noqa: BLE001 -- a CommandError, shlex's ValueError...: shown, the shell goes on
            self.stdout.write(f"error: {describe_error(exc)}\n")

    def do_unsubscribe(self, line: str) -> None:
        """unsubscribe URI: stop the updates of a resource"""
        try:
            self.client.unsubscribe_resource(line.strip())
        except Exception as exc:              # noqa: BLE001
            self.stdout.write(f"error: {describe_error(exc)}\n")

    def do_quit(self, line: str) -> bool:
        """quit: leave the shell"""
        return True

    def do_EOF(self, line: str) -> bool:
        if self.prompt:
            self.stdout.write("\n")             # end the prompt's line
        return True

    # -- rule 2
    def completedefault(self, text: str, line: str, begidx: int, endidx: int) -> list:
        """cmd's completion of every command's words: the listed names starting with ``text``, for
        the word after a command of ``_COMPLETES``."""
        command, *words = line.split() or [""]
        if command not in _COMPLETES or len(words) > 1 or (words and not text):    # only the word after it
            return []
        method, field = _COMPLETES[command]
        if method not in self._names:
            try:
                self._names[method] = [getattr(item, field) for item in getattr(self.client, method)()]
            except Exception:                 # noqa: BLE001 -- nothing to complete
                self._names[method] = []
        return [name for name in self._names[method] if name.startswith(text)]


def _make(name: str):
    def do(self, line):
        self.run(name, line)
    do.__doc__ = f"{name}: {COMMANDS[name][0]} (-h for its options)"
    return do


for _name in COMMANDS:
    setattr(Shell, "do_" + _name, _make(_name))


def run_shell(args) -> int:
    """Connect to the target and run the shell until Ctrl-D (rule 4)."""
    from mcp_ref.cli.wire import connect
    with connect(args) as client:
        readline: ModuleType | None = None
        shell = Shell(client)
        if sys.stdin.isatty():
            with contextlib.suppress(ImportError, OSError):
                import readline as line_editing
                readline = line_editing               # set first: no history file yet still saves one
                readline.read_history_file(HISTORY)
        else:                                # commands from a pipe: no prompts in the output
            shell.prompt = ""
        while True:
            try:
                shell.cmdloop()
                break
            except KeyboardInterrupt:
                shell.stdout.write("^C: the request in flight was cancelled\n")
                shell.intro = ""
        if readline is not None:
            with contextlib.suppress(OSError):
                readline.write_history_file(HISTORY)
        return 0
