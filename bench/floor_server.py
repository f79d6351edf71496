"""The floor: the least a stdio MCP server can do, for ``bench_stdio.py`` to compare against.

A plain stdlib loop: read one JSON line from stdin, write the answer as one
JSON line to stdout, flush. No library, no threads, no validation beyond
what it needs to answer. It answers:

* ``initialize``: the requested revision, ``tools`` capability, ``serverInfo``;
* ``tools/call``: an ``add``-like result, ``{"content": [{"type": "text", "text": "3"}]}``
  (``a + b`` of the arguments, so the work matches a real ``add`` tool);
* ``tools/list`` (the one tool), ``ping`` (``{}``), anything else -32601;
* notifications (no ``id``) are ignored.

It exits at stdin EOF. Run: ``python bench/floor_server.py``.
"""
import json
import sys

ADD_TOOL = {"name": "add", "description": "Add two numbers.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                            "required": ["a", "b"]}}


def answer(message):
    method = message.get("method")
    if method == "tools/call":
        args = (message.get("params") or {}).get("arguments") or {}
        try:
            text = str(args["a"] + args["b"])
        except (KeyError, TypeError):
            return {"content": [{"type": "text", "text": "bad arguments"}], "isError": True}
        return {"content": [{"type": "text", "text": text}]}
    if method == "initialize":
        version = (message.get("params") or {}).get("protocolVersion") or "2025-11-25"
        return {"protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0"}}
    if method == "tools/list":
        return {"tools": [ADD_TOOL]}
    if method == "ping":
        return {}
    return None


def main():
    read = sys.stdin.buffer.readline
    out = sys.stdout.buffer
    while True:
        line = read()
        if not line:
            return
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            if "id" not in message or "method" not in message:
                continue                        # a notification (or a stray response): ignored
            result = answer(message)
            if result is None:
                reply = {"jsonrpc": "2.0", "id": message["id"],
                         "error": {"code": -32601, "message": f"Method not found: {message['method']}"}}
            else:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        out.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
