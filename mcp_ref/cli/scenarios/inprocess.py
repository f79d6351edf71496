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
        show.step("tools/call with cancel=token; once the tool runs, another thread (a Stop button) "
                  "calls token.cancel(reason): notifications/cancelled names the request's id")
        token = CancelToken()

        def stop_button():
            if started.wait(WAIT):
                token.cancel("the user pressed Stop")
        button = threading.Thread(target=stop_button, name="stop-button", daemon=True)
        button.start()
        try:
            client.call_tool("wait_for_stop", cancel=token)
        except RequestCancelled as exc:
            show.say(f"the caller raised RequestCancelled: {exc}")
        button.join(WAIT)
        wait_for(saw_cancel, "the tool's cancellation")
        show.say("on the server the tool's ctx.cancelled was set (it stops); a cancelled request gets no "
                 "response, and one that came late anyway would be dropped")
        show.step("timeout=0.3: no answer in time, so the client cancels the request itself "
                  "and raises RequestTimeout")
        started.clear()
        try:
            client.call_tool("wait_for_stop", timeout=0.3)
        except RequestTimeout as exc:
            show.say(f"the caller raised RequestTimeout: {exc}")
        wait_for(saw_cancel, "the tool's cancellation")
        if show.modern:
            show.say("2026-07-28 over stdio (or this memory pair) sends the same notification; over Streamable "
                     "HTTP closing the request's response stream is the cancellation, no notification "
                     "(Spec 2026-07-28: basic/patterns/cancellation#transport-specific-cancellation)")
        show.step("ping: the client goes on; ids are never reused, so a late reply cannot be mistaken"
                  + (" (2026-07-28 has no ping method: the client's ping() is a server/discover)"
                     if show.modern else ""))
        client.ping()


def sampling(show) -> None:
    from mcp_ref.types import CreateMessageResult, TextContent
    server = Server("scenario-sampling", version="1.0")

    @server.tool
    def capital(country: str, ctx: Context) -> str:
        """Ask the client's LLM."""
        return ctx.sample([f"What is the capital of {country}? One word."], max_tokens=10).text

    def llm(request):
        return CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="pretend-llm")

    with show.connect(server, sampling=llm) as client:
        if show.modern:
            show.say("the client declares sampling in each request's _meta (clientCapabilities), by passing "
                     "sampling=llm")
            show.step("tools/call capital: the tool needs the client's LLM, so the answer is an "
                      "InputRequiredResult: inputRequests holds a sampling/createMessage under a key, and "
                      "requestState what the server needs to resume. The client asks its LLM and retries the "
                      "call (a new id) with inputResponses under the same key and requestState echoed as is")
            show.say("2025-11-25 sent sampling/createMessage as a request of its own while the call ran; "
                     "2026-07-28 servers must not (Spec 2026-07-28: basic/patterns/mrtr), so no server "
                     "keeps a connection or state between the two calls")
        else:
            show.say("the client declared the sampling capability in initialize, by passing sampling=llm")
            show.step("tools/call capital: while it runs, the tool asks the client's LLM (sampling/createMessage); "
                      "the client answers, then the tool answers")
            show.say("each side numbers its own requests: the server's request id says nothing about the "
                     "client's ids (they may even be equal); a response matches a request of its receiver")
        client.call_tool("capital", {"country": "France"})


def elicitation(show) -> None:
    from mcp_ref.client.elicitation import new_elicitation_id
    from mcp_ref.types import ElicitResult
    server = Server("scenario-elicitation", version="1.0")

    @server.tool
    def greet(ctx: Context) -> str:
        """Ask the user for a name, with a form."""
        reply = ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}},
                                          "required": ["name"]})
        return f"Hello, {reply.content['name']}!" if reply.action == "accept" else reply.action

    @server.tool
    def connect_mail(ctx: Context) -> str:
        """Send the user to a page (URL mode), then say it is done."""
        elicitation_id = new_elicitation_id()
        reply = ctx.elicit_url("Connect your mail account.", f"https://example.com/connect?id={elicitation_id}",
                               elicitation_id)
        if reply.action == "accept":
            ctx.session.complete_elicitation(elicitation_id)   # the page was visited (pretended)
        return reply.action

    done = threading.Event()
    with show.connect(server, elicitation=lambda request: ElicitResult(action="accept", content={"name": "Ada"}),
                      elicitation_url=lambda request: ElicitResult(action="accept"),
                      on_elicitation_complete=lambda elicitation_id: done.set()) as client:
        show.say("the client declared elicitation (form and url) by passing both callbacks")
        show.step("form mode: elicitation/create with a flat JSON Schema; the user's answer is accept + content"
                  + (": the request comes in the call's InputRequiredResult (inputRequests) and the answer goes "
                     "back in the retried call's inputResponses" if show.modern else ""))
        client.call_tool("greet")
        if show.modern:
            show.say("URL mode in 2026-07-28 also travels in inputRequests, but has no elicitationId and no "
                     "notifications/elicitation/complete: the retried call's requestState tells the server "
                     "whether the page was visited (Spec 2026-07-28: client/elicitation#url-mode); run "
                     "--protocol-version 2025-11-25 to see the 2025-11-25 URL mode")
            return
        show.step("URL mode (2025-11-25): the user is sent to a page, out of band; the answer only says they "
                  "agreed to go; notifications/elicitation/complete says the page is done")
        client.call_tool("connect_mail")
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
        if show.modern:
            show.say("roots=[...] declares the roots capability in each request's _meta")
            show.step("tools/call workspace: the answer asks for roots/list in inputRequests; the retried call "
                      "carries the roots in inputResponses")
            client.call_tool("workspace")
            show.step("client.set_roots(...): nothing is sent. 2026-07-28 has no notifications/roots/list_changed "
                      "(no session to tell): a server asks each time it needs them, so the next call gets the "
                      "new roots (Spec 2026-07-28: client/roots, basic/patterns/mrtr)")
            client.set_roots(["file:///home/ada/project", "file:///srv/data"])
            client.call_tool("workspace")
            return
        show.say("roots=[...] declared the roots capability (listChanged: true) in initialize")
        show.step("tools/call workspace: the server asks roots/list and the client answers its roots")
        client.call_tool("workspace")
        show.step("client.set_roots(...): the client sends notifications/roots/list_changed; the server asks again "
                  "when it needs them")
        client.set_roots(["file:///home/ada/project", "file:///srv/data"])
        wait_for(changed, "the server hearing roots/list_changed")
        client.call_tool("workspace")


def _constant(text: str):
    return lambda: text


def pagination(show) -> None:
    server = Server("scenario-pagination", version="1.0", page_size=2)
    for index in range(1, 6):
        server.add_tool(_constant(f"tool {index}"), name=f"tool_{index}", description=f"Tool number {index}.")
    with show.connect(server) as client:
        show.step("list_tools(): Server(page_size=2) answers two tools and a nextCursor; the client asks again "
                  "with that cursor until a page has none")
        tools = client.list_tools()
        show.say(f"{len(tools)} tools in 3 pages; the cursor is opaque: the client only hands it back")
        show.step("a cursor the server never gave is an error: -32602 (Invalid params)")
        try:
            client.list_tools_page("not-a-cursor")
        except InvalidParamsError as exc:
            show.say(f"the caller raised InvalidParamsError: {exc}")


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

    if show.modern:
        return _tasks_extension(show, server, release, running)
    with show.connect(server) as client:
        show.say("the server declared tasks (tasks.requests.tools.call) and the tool execution.taskSupport")
        show.step("tools/call with params.task: the server answers at once with a task (CreateTaskResult), "
                  "status working; the tool runs on (the client lists the tools first, to read the tool's "
                  "execution.taskSupport)")
        task = client.call_tool_as_task("report")
        wait_for(running, "the task's tool starting")
        show.step("tasks/get: the task's state, polled")
        client.get_task(task.task_id)
        release.set()
        show.step("tasks/result: waits until the task is terminal, then answers the tool's result; "
                  "notifications/tasks/status reports the change")
        client.task_result(task.task_id)
        show.step("tasks/list: this session's tasks")
        client.list_tasks()
        release.clear()
        running.clear()
        show.step("tasks/cancel: a task is cancelled with a request (not notifications/cancelled); "
                  "the answer is the task, status cancelled")
        task = client.call_tool_as_task("report")
        wait_for(running, "the task's tool starting")
        client.cancel_task(task.task_id)


def _tasks_extension(show, server, release, running) -> None:
    with show.connect(server) as client:
        show.say("2026-07-28 moved tasks to an extension, io.modelcontextprotocol/tasks: server/discover names "
                 "it, every request declares it in _meta, and the server alone decides to answer with a task "
                 "(Spec 2026-07-28: the tasks extension). No tasks/result, no tasks/list: the client polls")
        show.step("tools/call report: the answer is a task (resultType task, status working); call_tool "
                  "polls tasks/get at the pollIntervalMs the server suggests until the task is completed "
                  "and returns its result, as an ordinary call would")
        threading.Timer(0.1, release.set).start()
        client.call_tool("report")
        release.clear()
        running.clear()
        show.step("timeout=1: the task outlives the call's timeout, so the client sends tasks/cancel (a "
                  "request, not notifications/cancelled: the call itself was answered long ago) and raises "
                  "RequestTimeout; the server stops the tool and acknowledges with an empty result")
        try:
            client.call_tool("report", timeout=1.0)
        except RequestTimeout as exc:
            show.say(f"the caller raised RequestTimeout: {exc}")


SCENARIOS = {
    "cancel": ("a request cancelled from another thread (CancelToken), then one that times out", cancel),
    "sampling": ("a tool asks the client's LLM (sampling/createMessage) inside its tools/call", sampling),
    "elicitation": ("a tool asks the user: a form, then a URL (elicitation/create)", elicitation),
    "roots": ("a tool asks the client's roots (roots/list); the client changes them", roots),
    "pagination": ("list methods in pages: nextCursor, cursor, a bad cursor", pagination),
    "tasks": ("a tool call run as a task, polled with tasks/get, then one cancelled (tasks/cancel)", tasks),
}
