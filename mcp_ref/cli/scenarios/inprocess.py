"""The scenarios a client and server show over a memory pair (rules in __init__.py):
cancel, sampling, elicitation, roots, pagination, tasks. Each runs the era the
client agrees on (``show.modern``) and its ``#`` lines say what the other era does:
in 2026-07-28 a server asks for input inside its answer (``InputRequiredResult``
with ``inputRequests``; the client retries with ``inputResponses`` and the
``requestState`` echoed; Spec 2026-07-28: basic/patterns/mrtr), where 2025-11-25
sent its own request (``sampling/createMessage`` ...) while the call ran."""
from __future__ import annotations

import threading

from mcp_ref.session.outbound import CancelToken
from mcp_ref.errors import InvalidParamsError, RequestCancelled, RequestTimeout
from mcp_ref.server.server import Context, Server
from mcp_ref.cli.scenarios.show import WAIT, wait_for


def cancel(show) -> None:
    server = Server("scenario-cancel", version="1.0")
    started, saw_cancel = threading.Event(), threading.Event()

    @server.tool
    def wait_for_stop(ctx: Context) -> str:
        """Work until cancelled."""
        saw_cancel.clear()
        started.set()
        if ctx.cancelled.wait(WAIT):
            saw_cancel.set()
        return "finished"

    with show.connect(server) as client:
        show.step("cancel.button")
        token = CancelToken()

        def stop_button():
            if started.wait(WAIT):
                token.cancel("the user pressed Stop")
        button = threading.Thread(target=stop_button, name="stop-button", daemon=True)
        button.start()
        show.failing(RequestCancelled, client.call_tool, "wait_for_stop", cancel=token)
        button.join(WAIT)
        wait_for(saw_cancel, "the tool's cancellation")
        show.say("cancel.stopped")
        show.step("cancel.timeout")
        show.failing(RequestTimeout, client.call_tool, "wait_for_stop", timeout=0.3)
        wait_for(saw_cancel, "the tool's cancellation")
        if show.modern:
            show.say("cancel.http")
        show.step("cancel.ping")
        client.ping()


def sampling(show) -> None:
    from mcp_ref.types import CreateMessageResult, TextContent
    server = Server("scenario-sampling", version="1.0")

    @server.tool
    def capital(country: str, ctx: Context) -> str:
        """Ask the client's LLM."""
        return ctx.sample([f"What is the capital of {country}? One word."], max_tokens=10).text

    with show.connect(server, sampling=lambda request: CreateMessageResult(
            role="assistant", content=TextContent(text="Paris"), model="pretend-llm")) as client:
        show.say("sampling.declared")
        show.step("sampling.call")
        show.say("sampling.after")
        client.call_tool("capital", {"country": "France"})


def elicitation(show) -> None:
    from mcp_ref.examples.client_features import build_server
    from mcp_ref.types import ElicitResult
    server = build_server()                     # its connect_account: URL mode, completed in 2025-11-25

    @server.tool
    def greet(ctx: Context) -> str:
        """Ask the user for a name, with a form."""
        reply = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                          "required": ["name"]})
        return f"Hello, {reply.content['name']}!" if reply.action == "accept" else reply.action

    done = threading.Event()
    with show.connect(server, elicitation=lambda request: ElicitResult(action="accept", content={"name": "Ada"}),
                      elicitation_url=lambda request: ElicitResult(action="accept"),
                      on_elicitation_complete=lambda elicitation_id: done.set()) as client:
        show.say("elicitation.declared")
        show.step("elicitation.form")
        client.call_tool("greet")
        show.step("elicitation.url")
        client.call_tool("connect_account", {"service": "mail"})
        if not show.modern:
            wait_for(done, "notifications/elicitation/complete")


def roots(show) -> None:
    server = Server("scenario-roots", version="1.0")
    changed = threading.Event()

    @server.tool
    def workspace(ctx: Context) -> str:
        """The folders the client offers."""
        return ", ".join(root.uri for root in ctx.list_roots())

    server.on_roots_changed(lambda session: changed.set())
    with show.connect(server, roots=["file:///home/ada/project"]) as client:
        show.say("roots.declared")
        show.step("roots.call")
        client.call_tool("workspace")
        show.step("roots.change")
        client.set_roots(["file:///home/ada/project", "file:///srv/data"])
        if not show.modern:             # 2026-07-28 sends nothing: the next call asks again
            wait_for(changed, "the server hearing roots/list_changed")
        client.call_tool("workspace")


def _constant(text: str):
    return lambda: text


def pagination(show) -> None:
    server = Server("scenario-pagination", version="1.0", page_size=2)
    for index in range(1, 6):
        server.add_tool(_constant(f"tool {index}"), name=f"tool_{index}", description=f"Tool number {index}.")
    with show.connect(server) as client:
        show.step("pagination.pages")
        tools = client.list_tools()
        show.say(f"{len(tools)} tools in 3 pages; the cursor is opaque: the client only hands it back")
        show.step("pagination.bad")
        show.failing(InvalidParamsError, client.list_tools_page, "not-a-cursor")


def tasks(show) -> None:
    server = Server("scenario-tasks", version="1.0")
    release, running = threading.Event(), threading.Event()

    @server.tool(task_support="optional")
    def report(ctx: Context) -> str:
        """A long job, run as a task."""
        ctx.on_cancel(release.set)          # tasks/cancel stops it at once
        running.set()
        release.wait(WAIT)
        return "report ready"

    with show.connect(server) as client:
        if show.modern:
            show.say("tasks.extension")
            show.step("tasks.poll")
            threading.Timer(0.1, release.set).start()
            client.call_tool("report")
            release.clear()
            show.step("tasks.timeout")
            show.failing(RequestTimeout, client.call_tool, "report", timeout=1.0)
            return
        show.say("tasks.declared")
        show.step("tasks.call")
        task = client.call_tool_as_task("report")
        wait_for(running, "the task's tool starting")
        show.step("tasks.get")
        client.get_task(task.task_id)
        release.set()
        show.step("tasks.result")
        client.task_result(task.task_id)
        show.step("tasks.list")
        client.list_tasks()
        release.clear()
        running.clear()
        show.step("tasks.cancel")
        task = client.call_tool_as_task("report")
        wait_for(running, "the task's tool starting")
        client.cancel_task(task.task_id)
