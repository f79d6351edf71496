"""The growth floor: a stdlib stdio JSON-RPC loop for ``bench_growth.py`` to compare against.

The same loop as ``floor_server.py`` (read a JSON line, answer, flush; no
library), with the behaviours the growth curves need:

* ``tools/call`` of ``echo`` (``{"text": ...}``, answered with that text),
  ``noop`` (an empty text), ``cpu`` (the process's user + system CPU seconds
  so far, from ``resource.getrusage``), all answered on the reading thread;
* ``tools/call`` of ``sleep``: ``time.sleep(0.01)`` on a plain
  ``ThreadPoolExecutor`` of 16 threads (mcp_ref's default ``max_workers``),
  whose thread writes the answer under a lock: the least a server must do to
  run blocking tools side by side;
* a catalogue, ``python bench/floor_growth.py MODULE``: ``tools/list`` lists
  ``MODULE.TOOLS`` (plain functions ``tN(a: int, b: str = "x") -> str``) in
  pages of 100 with an opaque cursor (the base64 of the next index). The
  descriptors are built once at start-up by hand (name, docstring, a fixed
  schema), and a page is one slice of that list;
* ``python bench/floor_growth.py MODULE KIND``: the same for ``MODULE.ITEMS``
  as resources (``resources/list``), resource templates
  (``resources/templates/list``) or prompts (``prompts/list``), KIND being
  ``resources``, ``templates`` or ``prompts``; their descriptors written by
  hand the same way (URI or URI template, name, docstring; a prompt's two
  arguments).

It answers ``initialize`` (the requested revision, ``tools`` capability, and
``resources`` and ``prompts`` when it lists those),
``ping``, and -32601 for anything else; notifications are ignored. It exits at
stdin EOF. Run: ``python bench/floor_growth.py [MODULE]`` (no argument
parser: the floor imports nothing it does not need).

``python bench/floor_growth.py --http`` is the HTTP floor instead: a bare
``http.server.ThreadingHTTPServer`` JSON endpoint on a free loopback port (one
thread per connection, HTTP/1.1 keep-alive, one JSON body per answer, 202 for
a notification) that answers ``initialize`` and an ``add`` ``tools/call``. Its
accept queue is ``socket.SOMAXCONN`` rather than socketserver's default of 5,
as any server meant for bursts of clients sets it. It prints
``READY <url>`` and serves until killed.
"""
import json
import sys
import threading
import time

CATALOG_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"},
                                                   "b": {"type": "string", "default": "x"}},
                  "required": ["a"]}


def text_result(text):
    return {"content": [{"type": "text", "text": text}]}


def cpu_seconds():
    import resource
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


PROMPT_ARGUMENTS = [{"name": "topic", "required": True}, {"name": "style", "required": False}]


def descriptors(module, kind):
    """``(list method, result member, descriptors)`` of a catalogue module's items."""
    if kind == "resources":
        return "resources/list", "resources", [
            {"uri": f"res://r{i}", "name": fn.__name__, "description": fn.__doc__} for i, fn in enumerate(module.ITEMS)]
    if kind == "templates":
        return "resources/templates/list", "resourceTemplates", [
            {"uriTemplate": f"tpl://r{i}/{{id}}", "name": fn.__name__, "description": fn.__doc__}
            for i, fn in enumerate(module.ITEMS)]
    if kind == "prompts":
        return "prompts/list", "prompts", [
            {"name": fn.__name__, "description": fn.__doc__, "arguments": PROMPT_ARGUMENTS} for fn in module.ITEMS]
    return "tools/list", "tools", [
        {"name": fn.__name__, "description": fn.__doc__, "inputSchema": CATALOG_SCHEMA} for fn in module.TOOLS]


class Floor:
    def __init__(self, catalog=None, kind="tools", page_size=100, workers=16):
        self.out = sys.stdout.buffer
        self.lock = threading.Lock()
        self.workers = workers
        self.pool = None                          # made on the first ``sleep`` call
        self.page_size = page_size
        self.list_method, self.member, self.tools = "tools/list", "tools", []
        if catalog:
            self.list_method, self.member, self.tools = descriptors(__import__(catalog), kind)

    def send(self, reply):
        data = json.dumps(reply, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            self.out.write(data)
            self.out.flush()

    def list_tools(self, params):
        import base64
        cursor = params.get("cursor")
        start = int(base64.b64decode(cursor)) if cursor else 0
        end = start + self.page_size
        result = {self.member: self.tools[start:end]}
        if end < len(self.tools):
            result["nextCursor"] = base64.b64encode(str(end).encode()).decode()
        return result

    def sleep(self, request_id):
        time.sleep(0.01)
        self.send({"jsonrpc": "2.0", "id": request_id, "result": text_result("")})

    def answer(self, message):
        """The result, or None for -32601; ``...`` when the pool answers later."""
        method = message["method"]
        params = message.get("params") or {}
        if method == "tools/call":
            name = params.get("name")
            if name == "echo":
                return text_result(params["arguments"]["text"])
            if name == "noop":
                return text_result("")
            if name == "sleep":
                if self.pool is None:
                    from concurrent.futures import ThreadPoolExecutor
                    self.pool = ThreadPoolExecutor(self.workers)
                self.pool.submit(self.sleep, message["id"])
                return ...
            if name == "cpu":
                return text_result(repr(cpu_seconds()))
            return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion") or "2025-11-25",
                    "capabilities": {"tools": {}, "resources": {}, "prompts": {}} if self.member != "tools"
                    else {"tools": {}}, "serverInfo": {"name": "floor", "version": "0"}}
        if method == self.list_method:
            return self.list_tools(params)
        if method == "ping":
            return {}
        return None

    def run(self):
        read = sys.stdin.buffer.readline
        while True:
            line = read()
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
                continue
            if "id" not in message or "method" not in message:
                continue                        # a notification (or a stray response): ignored
            result = self.answer(message)
            if result is ...:
                continue
            if result is None:
                self.send({"jsonrpc": "2.0", "id": message["id"],
                           "error": {"code": -32601, "message": f"Method not found: {message['method']}"}})
            else:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        if self.pool is not None:
            self.pool.shutdown(wait=True)


def serve_http():
    import socket
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def do_POST(self):
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "id" not in message:
                self.wfile.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                return
            if message["method"] == "initialize":
                result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "floor", "version": "0"}}
            else:
                args = message["params"]["arguments"]
                result = text_result(str(args["a"] + args["b"]))
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % len(body) + body)

    class Listener(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = socket.SOMAXCONN

    server = Listener(("127.0.0.1", 0), Handler)
    print("READY http://127.0.0.1:%d/mcp" % server.server_address[1], flush=True)
    server.serve_forever()


def main():
    if sys.argv[1:2] == ["--http"]:
        serve_http()
    else:
        Floor(sys.argv[1] if len(sys.argv) > 1 else None, sys.argv[2] if len(sys.argv) > 2 else "tools").run()


if __name__ == "__main__":
    main()
