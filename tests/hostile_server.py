"""A scripted hostile (or broken) MCP server for the stdio client's tests.

Standard library only, so it needs nothing from mcp_ref. Run as
``python hostile_server.py BEHAVIOUR``; it answers ``initialize`` (with the
revision asked for), ``ping`` and ``tools/list`` like a plain server with one
tool, and misbehaves as BEHAVIOUR says, mostly when a ``tools/call`` arrives.
It exits when its stdin ends. Each behaviour is one function below, named
after it (``-`` for ``_``); ``tests/test_hostile_stdio.py`` drives them.
"""
import json
import os
import sys
import time

DEEP = 100_000                                # deeper than any JSON parser's recursion limit
TOOL = {"name": "poke", "description": "Ask for the misbehaviour.", "inputSchema": {"type": "object"}}

_out = sys.stdout.buffer
_in = sys.stdin.buffer


def write(data) -> None:
    """One line on stdout: a dict or list as compact JSON, a str or bytes as it is."""
    if isinstance(data, (dict, list)):
        data = json.dumps(data, separators=(",", ":"))
    if isinstance(data, str):
        data = data.encode("utf-8")
    _out.write(data + b"\n")
    _out.flush()


def result(request_id, value: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def text(request_id, body: str) -> dict:
    return result(request_id, {"content": [{"type": "text", "text": body}]})


def read():
    """The next message from the client, or None at EOF (lines that are not JSON are skipped)."""
    while True:
        line = _in.readline()
        if not line:
            return None
        try:
            return json.loads(line)
        except ValueError:
            continue


def ask(request_id, method: str, params: dict):
    """Send a request to the client and return its answer (messages before it are dropped)."""
    write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
            return message


# ---------------------------------------------------------------------- behaviours on tools/call
def echo_env(request_id, arguments):
    """The whole environment the client gave us."""
    write(text(request_id, json.dumps(dict(os.environ))))


def deep_reply(request_id, arguments):
    """A reply nested DEEP levels: no parser reads it, but its head shows the id."""
    write('{"jsonrpc":"2.0","id":%s,"result":{"content":%s%s}}' % (json.dumps(request_id), "[" * DEEP, "]" * DEEP))


def deep_notification(request_id, arguments):
    """A notification nested DEEP levels, then the real answer."""
    write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%s%s}}'
          % ("[" * DEEP, "]" * DEEP))
    write(text(request_id, "after the deep notification"))


def bad_utf8_reply(request_id, arguments):
    """A reply whose text is not UTF-8."""
    write(b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() +
          b',"result":{"content":[{"type":"text","text":"\xff\xfe"}]}}')


def big_reply(request_id, arguments):
    """A reply of about ``arguments["size"]`` bytes (the client's limit is set lower)."""
    write(text(request_id, "b" * int(arguments.get("size", 1000))))


def null_id_error(request_id, arguments):
    """An error with a null id: "I could not read your request"."""
    write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: hostile says no"}})


def batch_reply(request_id, arguments):
    """The answer inside a JSON array (a batch reply to a single request)."""
    write([text(request_id, "batched")])


def surrogate_result(request_id, arguments):
    """Text holding lone surrogates (JSON escapes of what is not Unicode)."""
    write('{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"a\\ud800b\\udce9"}]}}'
          % json.dumps(request_id))


def close_stdout(request_id, arguments):
    """Close stdout mid-call and live on until stdin ends (``linger`` seconds more when given)."""
    global _out
    _out.flush()
    os.close(1)
    _out = open(os.devnull, "wb")
    while read() is not None:
        pass
    time.sleep(float(arguments.get("linger", 0)))
    sys.exit(0)


def exit_mid_call(request_id, arguments):
    """Say why on stderr, then exit 3 without answering."""
    print("hostile server: exiting mid-call", file=sys.stderr, flush=True)
    os._exit(3)


def bad_utf8(request_id, arguments):
    """A line that is not UTF-8, then the answer."""
    write(b"\xff\xfe\xfd not utf-8 \xc3\x28")
    write(text(request_id, "after invalid UTF-8"))


def huge_line(request_id, arguments):
    """A 64 MB line (no message), then the answer."""
    chunk = b"x" * (1 << 20)
    for _ in range(64):
        _out.write(chunk)
    write(b"")
    write(text(request_id, "after a 64 MB line"))


def flood(request_id, arguments):
    """200,000 notifications, then the answer."""
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"flood"}}\n'
    for _ in range(200):
        _out.write(line * 1000)
    _out.flush()
    write(text(request_id, "after the flood"))


def garbage(request_id, arguments):
    """Lines that are not MCP messages on stdout, then the answer."""
    for line in ("hello from a print()", "{not json", "42", "null", '{"jsonrpc":"2.0"}', '"a string"'):
        write(line)
    write(text(request_id, "after the garbage"))


def server_requests(request_id, arguments):
    """Requests for capabilities the client did not declare; the answer lists their error codes."""
    codes = []
    for n, (method, params) in enumerate([
            ("sampling/createMessage", {"messages": [], "maxTokens": 1}),
            ("roots/list", {}),
            ("elicitation/create", {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}),
            ("no/such/method", {})]):
        answer = ask(f"s{n}", method, params)
        codes.append(answer.get("error", {}).get("code"))
    write(text(request_id, json.dumps(codes)))


def url_elicitation(request_id, arguments):
    """URL elicitations with dangerous schemes, then a good one; the answer lists the client's answers."""
    answers = []
    for n, url in enumerate(["javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi",
                             "https://example.com/consent"]):
        answer = ask(f"e{n}", "elicitation/create", {"mode": "url", "message": "open this", "url": url,
                                                     "elicitationId": f"el-{n}"})
        answers.append(answer.get("result", {}).get("action") or answer.get("error", {}).get("code"))
    write(text(request_id, json.dumps(answers)))


# ---------------------------------------------------------------------- behaviours on tools/list
def endless_cursor(request_id, params):
    """A fresh nextCursor on every page."""
    serial = int(params.get("cursor") or 0)
    write(result(request_id, {"tools": [dict(TOOL, name=f"tool{serial}")], "nextCursor": str(serial + 1)}))


ON_LIST = {"endless-cursor": endless_cursor}


def main() -> None:
    behaviour = sys.argv[1]
    on_call = globals()[behaviour.replace("-", "_")] if behaviour not in ON_LIST else None
    while True:
        message = read()
        if message is None:
            return
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue                                       # notifications, answers, batches
        request_id, method, params = message["id"], message["method"], message.get("params") or {}
        if method == "initialize":
            write(result(request_id, {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                                      "capabilities": {"tools": {}},
                                      "serverInfo": {"name": "hostile", "version": behaviour}}))
        elif method == "ping":
            write(result(request_id, {}))
        elif method == "tools/list" and behaviour in ON_LIST:
            ON_LIST[behaviour](request_id, params)
        elif method == "tools/list":
            write(result(request_id, {"tools": [TOOL]}))
        elif method == "tools/call" and params.get("name") == "poke":
            on_call(request_id, params.get("arguments") or {})
        elif method == "tools/call":
            write(text(request_id, "plain answer"))
        else:
            write({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
