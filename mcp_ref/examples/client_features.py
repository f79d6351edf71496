"""A server that uses every client feature: sampling, elicitation (form and URL), roots.

Run: ``python -m mcp_ref.examples.client_features`` (stdio). The client-feature
tests spawn it with ``Client.stdio([sys.executable, "-m",
"mcp_ref.examples.client_features"], sampling=..., elicitation=..., roots=...)``.

Tools (each needs the client feature it names; without it the tool answers an
``isError`` result saying what is missing):

``ask_llm(question, timeout=None, model_hint=None)``
    samples once (``modelPreferences`` with the hint, ``systemPrompt``,
    ``temperature``, ``stopSequences``, ``metadata``) and returns
    ``"<model>: <text>"``.
``ask_llm_many(questions)``
    samples once per question, all at the same time (threads), and returns the
    answers joined by ``|``: concurrent nested requests inside one call.
``weather_agent(question, rounds=3)``
    the 2025-11-25 tool loop: samples with a ``get_weather`` tool, answers each
    ``tool_use`` with a ``tool_result``, and returns the final text.
``ask_user(message="...", schema=None)``
    form elicitation (a name/age form unless ``schema`` is given); returns
    ``"accept:<json content>"``, ``"decline"`` or ``"cancel"``.
``plan_trip(city)``
    samples an itinerary, then elicits a confirmation, with progress
    reported before, between and after: one ``tools/call``, two nested
    requests, progress flowing meanwhile.
``connect_account(service)``
    URL mode elicitation; on accept, completes the elicitation (sends
    ``notifications/elicitation/complete``) and returns ``"accept:<id>"``.
``needs_connection(service)``
    fails with the URL-elicitation-required error (-32042) until
    ``connect_account`` completed for ``service`` (or the browser visited the
    error's URL).
``browser_visit(elicitation_id)``
    stands in for the user finishing the out-of-band page of a -32042
    elicitation: connects its service and sends
    ``notifications/elicitation/complete`` to the session that was asked.
``show_roots()``
    the client's roots as ``"name=uri"`` lines.
``check_path(path)``
    ``"inside <root uri>"`` or the refusal, resolving ``..`` and symlinks.
``roots_changes(at_least=0)``
    how many ``notifications/roots/list_changed`` this session sent, waiting
    (up to 5 s) until there are ``at_least``.
"""
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

from mcp_ref import Context, Server
from mcp_ref.client.elicitation import new_elicitation_id, url_elicitation, url_elicitation_required
from mcp_ref.client.roots import find_root, require_inside
from mcp_ref.types import ModelPreferences, SamplingMessage, TextContent, Tool, ToolResultContent

FORM = {"type": "object", "properties": {
    "name": {"type": "string", "title": "Name", "minLength": 1},
    "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
    "newsletter": {"type": "boolean", "default": False},
}, "required": ["name"]}

WEATHER_TOOL = Tool(name="get_weather", description="Current weather for a city", input_schema={
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
WEATHER = {"Paris": "18°C, partly cloudy", "London": "15°C, rainy"}


def build_server() -> Server:
    server = Server("client-features", version="1.0",
                    instructions="Tools that sample, elicit and read roots from the client.")
    connected: set = set()
    awaiting: dict = {}                 # elicitation id -> (service, session), from -32042 errors
    changes: dict = {}
    lock = changed = threading.Condition()          # guards all three; notified on a roots change

    @server.on_roots_changed
    def count_change(session) -> None:
        with changed:
            changes[id(session)] = changes.get(id(session), 0) + 1
            changed.notify_all()

    @server.tool
    def ask_llm(question: str, ctx: Context, timeout: Optional[float] = None, model_hint: Optional[str] = None) -> str:
        """Ask the client's LLM one question."""
        hints = [{"name": model_hint}] if model_hint else []
        result = ctx.sample([SamplingMessage(role="user", content=TextContent(text=question))], max_tokens=100,
                            system_prompt="You are a helpful assistant.", temperature=0.2,
                            stop_sequences=["\n\n"], metadata={"tool": "ask_llm"}, timeout=timeout,
                            model_preferences=ModelPreferences.from_dict(
                                {"hints": hints, "intelligencePriority": 0.8, "speedPriority": 0.5}))
        return f"{result.model}: {result.text}"

    @server.tool
    def ask_llm_many(questions: list, ctx: Context) -> str:
        """Ask several questions at once (concurrent nested sampling requests)."""
        def ask(question: str) -> str:
            try:
                return ctx.sample([question], max_tokens=50).text
            except Exception as exc:            # reported in the answer
                return f"error: {exc}"
        with ThreadPoolExecutor(max(1, len(questions))) as pool:      # one thread per question
            return "|".join(pool.map(ask, questions))

    @server.tool
    def weather_agent(question: str, ctx: Context, rounds: int = 3) -> str:
        """Answer with the client's LLM, which may call get_weather (sampling with tools)."""
        messages = [SamplingMessage(role="user", content=TextContent(text=question))]
        for _ in range(rounds):
            result = ctx.sample(messages, max_tokens=200, tools=[WEATHER_TOOL], tool_choice="auto")
            if result.stop_reason != "toolUse":
                return " ".join(b.text for b in result.blocks() if isinstance(b, TextContent))
            uses = result.blocks()
            messages.append(SamplingMessage(role="assistant", content=uses))
            messages.append(SamplingMessage(role="user", content=[
                ToolResultContent(tool_use_id=use.id, content=[
                    TextContent(text=WEATHER.get(use.input.get("city"), "unknown city"))]) for use in uses]))
        raise RuntimeError(f"no final answer after {rounds} rounds")

    @server.tool
    def ask_user(ctx: Context, message: str = "Who are you?", schema: Optional[dict] = None) -> str:
        """Ask the user to fill in a form."""
        result = ctx.elicit(message, schema or FORM)
        if result.action == "accept":
            return "accept:" + json.dumps(result.content, sort_keys=True)
        return result.action

    @server.tool
    def plan_trip(city: str, ctx: Context) -> str:
        """Sample an itinerary, then ask the user to confirm it, reporting progress."""
        ctx.report_progress(1, 3, "asking the LLM")
        plan = ctx.sample([f"Plan a day in {city}"], max_tokens=100).text
        ctx.report_progress(2, 3, "asking the user")
        answer = ctx.elicit(f"Book this plan? {plan}", {"type": "object", "properties": {
            "confirm": {"type": "boolean", "title": "Book it"},
            "travellers": {"type": "integer", "minimum": 1, "default": 1}}, "required": ["confirm"]})
        ctx.report_progress(3, 3, "done")
        if answer.action != "accept" or not answer.content["confirm"]:
            return f"not booked ({answer.action})"
        return f"booked for {answer.content['travellers']}: {plan}"

    @server.tool
    def connect_account(service: str, ctx: Context) -> str:
        """Send the user to a (pretend) connect page in URL mode. In 2025-11-25 the
        elicitation has an id, and its completion is announced; 2026-07-28 has neither,
        and asks the same question each time the tool runs again (multi round-trip), so
        its URL carries nothing random."""
        elicitation_id = new_elicitation_id() if ctx.protocol_version == "2025-11-25" else None
        url = f"https://example.com/connect?service={service}" + (f"&id={elicitation_id}" if elicitation_id else "")
        result = ctx.elicit_url(f"Connect your {service} account.", url, elicitation_id)
        if result.action != "accept":
            return result.action
        with lock:
            connected.add(service)
        if elicitation_id is None:
            return "accept"
        ctx.session.complete_elicitation(elicitation_id)    # the out-of-band part is pretended done
        return f"accept:{elicitation_id}"

    @server.tool
    def needs_connection(service: str, ctx: Context) -> str:
        """Use a service; -32042 until connect_account ran for it."""
        elicitation_id = new_elicitation_id()
        with lock:
            if service in connected:
                return f"used {service}"
            awaiting[elicitation_id] = (service, ctx.session)
        raise url_elicitation_required(
            [url_elicitation(f"Connect your {service} account.",
                             f"https://example.com/connect?service={service}&id={elicitation_id}", elicitation_id)],
            f"{service} is not connected", capabilities=ctx.client_capabilities, revision=ctx.protocol_version)

    @server.tool
    def browser_visit(elicitation_id: str) -> str:
        """Pretend the user completed the page of a -32042 elicitation."""
        with lock:
            service, session = awaiting.pop(elicitation_id)
            connected.add(service)
        session.complete_elicitation(elicitation_id)
        return f"connected {service}"

    @server.tool
    def show_roots(ctx: Context) -> str:
        """List the client's roots."""
        return "\n".join(f"{root.name or ''}={root.uri}" for root in ctx.list_roots())

    @server.tool
    def check_path(path: str, ctx: Context) -> str:
        """Is this path inside one of the client's roots?"""
        roots = ctx.list_roots()
        require_inside(path, roots)                     # PathOutsideRoots: an isError result
        return f"inside {find_root(path, roots).uri}"

    @server.tool
    def roots_changes(ctx: Context, at_least: int = 0) -> int:
        """How many roots/list_changed notifications this session sent (waits for ``at_least``)."""
        with changed:
            changed.wait_for(lambda: changes.get(id(ctx.session), 0) >= at_least, timeout=5.0)
            return changes.get(id(ctx.session), 0)

    return server


server = build_server()

if __name__ == "__main__":
    server.run()
