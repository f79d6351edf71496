"""Seeded random fuzzing: hostile input at a server over stdio (a real subprocess),
in process and over Streamable HTTP, and at a client from a hostile server; tool
arguments that break their schemas, resource URIs that try to leave their folder,
a URI template built for catastrophic backtracking, elicitation answers that break
their schema, lone surrogates and deep nesting. See tests/fuzzing.py for what every
run checks. Counts are small here; ``python bench/fuzz.py`` runs large ones with
the same code. ``MCP_FUZZ_SEED`` picks another seed (a failure prints its seed).

Spec: basic/index (messages, error codes), basic/transports, server/tools#error-handling,
server/resources#security-considerations, client/roots#security-considerations,
client/elicitation#form-mode-security.
"""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import fuzzing
import fuzz_target
from helpers import WAIT
from mcp_ref import Client
from mcp_ref.errors import McpError
from mcp_ref.client.roots import PathOutsideRoots, path_to_uri, require_inside
from mcp_ref.transports import memory_pair

pytest.importorskip("jsonschema")

SEED = int(os.environ.get("MCP_FUZZ_SEED", "20251125"))
ROOT = Path(__file__).resolve().parent.parent
TARGET = [sys.executable, str(ROOT / "tests" / "fuzz_target.py")]


def _env(**extra) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


class StdioTarget:
    """``tests/fuzz_target.py`` as a subprocess, driven line by line."""

    def __init__(self, **env):
        self.process = subprocess.Popen(TARGET, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=_env(**env))
        self.stderr = b""
        self._err = threading.Thread(target=self._drain, daemon=True)
        self._err.start()
        self.peer = fuzzing.stdio_peer(self.process)

    def _drain(self):
        self.stderr = self.process.stderr.read()

    def close(self) -> int:
        """Close stdin (the polite shutdown); the exit status, or None when it did not exit."""
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            return self.process.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return None
        finally:
            self._err.join(WAIT)
            self.process.stdout.close()


@pytest.fixture
def in_process():
    """``(LinePeer, server)``: ``fuzz_target`` on one end of a memory pair, initialized."""
    server = fuzz_target.build()
    peer_end, server_end = memory_pair()
    session = server.serve(server_end)
    peer = fuzzing.memory_peer(peer_end)
    fuzzing.initialize(peer)
    yield peer, server
    session.close()


def _report(out: dict, seed) -> str:
    return f"seed {seed}: {len(out['problems'])} problems:\n" + "\n".join(p[:500] for p in out["problems"][:20])


# ---------------------------------------------------------------------- servers
@pytest.mark.req("BASE-2", "BASE-8", "BASE-11", "LIFE-14", "CANC-6", "CANC-9")
def test_hostile_lines_at_an_in_process_server(in_process):
    peer, server = in_process
    out = fuzzing.fuzz_lines(peer, SEED, 1500, every=True)
    assert out["problems"] == [], _report(out, SEED)
    assert out["good"] > 200


@pytest.mark.req("BASE-2", "BASE-8", "BASE-11", "TRN-1", "TRN-5")
def test_hostile_lines_at_a_stdio_server():
    target = StdioTarget()
    try:
        fuzzing.initialize(target.peer)
        out = fuzzing.fuzz_lines(target.peer, SEED + 1, 400, every=True)
    finally:
        status = target.close()
    assert out["problems"] == [], _report(out, SEED + 1)
    assert status == 0, target.stderr[-2000:]


@pytest.mark.req("TRN-16", "TRN-17", "TRN-18")
def test_hostile_bodies_at_a_streamable_http_server():
    from mcp_ref.transports.http.server.app import start_http
    handle = start_http(fuzz_target.build(), ("127.0.0.1", 0))
    try:
        out = fuzzing.fuzz_http(handle.url, SEED + 2, 200)
    finally:
        handle.shutdown()
    assert out["problems"] == [], _report(out, SEED + 2)


# ---------------------------------------------------------------------- a client from a hostile server
@pytest.mark.req("BASE-11", "CANC-6")
def test_a_client_facing_a_hostile_server():
    out = fuzzing.fuzz_client(SEED + 3, 12, timeout=0.2)
    assert out["problems"] == [], _report(out, SEED + 3)


# ---------------------------------------------------------------------- lone surrogates and deep nesting
SURROGATE_LINES = {
    "tool argument": r'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\ud800"}}}',
    "request id": r'{"jsonrpc":"2.0","id":"\udfff","method":"ping"}',
    "method": r'{"jsonrpc":"2.0","id":5,"method":"\ud800"}',
    "tool name": r'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"\ud800"}}',
    "resource uri": r'{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///\ud800"}}',
    "prompt argument": r'{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"\ud800"}}}',
    "argument name": r'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"\ud800":"x"}}}',
    "notification": r'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"\ud800","progress":1}}',
}


@pytest.mark.req("TRN-1")
@pytest.mark.parametrize("where", [
    pytest.param(name) for name in SURROGATE_LINES])
def test_a_lone_surrogate_anywhere_is_answered_and_the_stdio_server_lives(where):
    target = StdioTarget()
    try:
        fuzzing.initialize(target.peer)
        line = SURROGATE_LINES[where]
        target.peer.send(line.encode())
        answered = '"id"' in line and where != "notification"
        seen = []

        def read_until(done):
            while not done():
                message = target.peer.recv(WAIT)
                assert message is not None, f"the server exited after a lone surrogate in the {where}"
                seen.append(message)

        def answers():
            return [m for m in seen if m.get("id") == 5 or (m.get("id") is None and "error" in m)]
        if answered:
            read_until(answers)                  # the answer first: a ping may overtake a served request
        target.peer.send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}')
        read_until(lambda: any(m.get("id") == "after" for m in seen))
        if answered:
            assert len(answers()) == 1 and "unparseable" not in answers()[0], seen
        else:
            assert answers() == [], seen
    finally:
        target.close()


SURROGATE_SERVER = r"""
import json, sys
def w(m):
    sys.stdout.buffer.write(json.dumps(m).encode() + b"\n")
    sys.stdout.buffer.flush()
for line in sys.stdin.buffer:
    m = json.loads(line)
    if m.get("method") == "initialize":
        w({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-11-25",
           "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "s\ud800", "version": "1"}}})
    elif m.get("method") == "tools/call":
        w({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "\udfff"}})
        w({"jsonrpc": "2.0", "id": "p\ud800", "method": "ping"})
        w({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {"message": "\ud800",
           "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}}}})
        w({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "a\ud800b"}]}})
    elif m.get("method") == "ping":
        w({"jsonrpc": "2.0", "id": m["id"], "result": {}})
"""


@pytest.mark.req("TRN-1")
def test_lone_surrogates_from_a_server_leave_the_stdio_client_working():
    logs = []
    client = Client.stdio([sys.executable, "-c", SURROGATE_SERVER], timeout=WAIT, on_log=logs.append,
                          elicitation=lambda request: {"action": "decline"})
    with client:
        assert client.server_info.name == "s\ud800"
        assert client.call_tool("x", {}).content[0].text == "a\ud800b"
        client.ping()                                     # the client still works after answering both


@pytest.mark.req("BASE-2")
def test_a_request_nested_ten_thousand_deep_is_answered_and_the_stdio_server_lives():
    target = StdioTarget()
    try:
        fuzzing.initialize(target.peer)
        deep = '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"a":' + "[" * 10000 + "]" * 10000 + "}}"
        target.peer.send(deep.encode())
        target.peer.send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}')
        while True:
            message = target.peer.recv(WAIT)
            assert message is not None, "the server exited after a deeply nested request"
            if message.get("id") == "after":
                break
    finally:
        target.close()


# ---------------------------------------------------------------------- tool arguments against their schemas
BREAKING_ARGUMENTS = {
    "echo": [{}, {"text": 5}, {"text": None}, {"text": ["a"]}, {"text": {"a": 1}}, {"text": True}],
    "add": [{"a": 1}, {"a": "1", "b": 2}, {"a": 1.5, "b": 2}, {"a": True, "b": 2}, {"a": None, "b": None},
            {"a": [], "b": {}}, {"a": "", "b": 1}],
    "shape": [{}, {"kind": "triangle", "size": 1}, {"kind": "circle", "size": -1}, {"kind": "circle", "size": 1001},
              {"kind": "circle", "size": "1"}, {"kind": "circle", "size": 1, "extra": 1},
              {"kind": "circle", "size": 1, "tags": ["a"] * 6}, {"kind": "circle", "size": 1, "tags": [1]},
              {"kind": "circle", "size": 1, "origin": {"x": 1}},
              {"kind": "circle", "size": 1, "origin": {"x": 1, "y": 2, "z": 3}},
              {"kind": "circle", "size": 1, "origin": {"x": "1", "y": 2}}, {"kind": ["circle"], "size": 1}],
}


@pytest.mark.req("TOOL-17", "SCHEMA-27")
def test_tool_arguments_that_break_the_schema_are_refused_before_the_tool_runs():
    server = fuzz_target.build()
    gen = fuzzing.Gen(SEED + 4)
    cases = [(name, args) for name, many in BREAKING_ARGUMENTS.items() for args in many]
    valid = {"echo": {"text": "x"}, "add": {"a": 1, "b": 2}, "shape": {"kind": "square", "size": 2}}
    for name, args in list(valid.items()):            # plus random single-field mutations
        for _ in range(15):
            mutated = gen.mutate(args)
            cases.append((name, mutated))
    client_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        with Client(client_end, timeout=WAIT) as client:
            for name, args in cases:
                before = len(server.calls)
                result = client.call_tool(name, args)
                ran = len(server.calls) > before
                text = result.content[0].text if result.content else ""
                if result.is_error:
                    # the schema check, or binding (an argument the function does not take)
                    assert text.startswith((f"Invalid arguments for tool {name}", "unknown argument")), \
                        (name, args, text)
                    assert not ran, (name, args)
                else:                                     # a random mutation may still fit the schema
                    assert ran and name in {"echo", "add", "shape"}, (name, args, text)
                    assert (name, args) not in [(n, a) for n, many in BREAKING_ARGUMENTS.items() for a in many]
            assert client.call_tool("add", {"a": 2, "b": 3}).content[0].text == "5"
    finally:
        session.close()


# ---------------------------------------------------------------------- resource URIs and roots
TRAVERSALS = [
    "file:///{base}/../secret.txt", "file:///{base}/sub/../../secret.txt", "file:///{base}/%2e%2e/secret.txt",
    "file:///{base}/..%2fsecret.txt", "file:///{base}%2f..%2fsecret.txt", "file:///{base}/%2E%2E%2Fsecret.txt",
    "file:///{base}/link/secret.txt", "file:///{base}/link", "file:///{outside}/secret.txt",
    "file:///{base}/..\\secret.txt", "file:///{base}/./../secret.txt", "file:///{base}//../secret.txt",
    "file:///{base}/%252e%252e/secret.txt", "file:///{base}/inside.txt%00/../../secret.txt",
    "file:///{base}/inside.txt/../../secret.txt", "file://localhost/{outside}/secret.txt",
    "file:///{base}/..;/secret.txt", "file:///{base}/escape", "file:///{base}/sub/%2e%2e/%2e%2e/secret.txt",
]


@pytest.fixture
def folders(tmp_path):
    base, outside = tmp_path / "base", tmp_path / "outside"
    (base / "sub").mkdir(parents=True)
    outside.mkdir()
    (base / "inside.txt").write_text("inside")
    (outside / "secret.txt").write_text("SECRET")
    (tmp_path / "secret.txt").write_text("SECRET")
    (base / "link").symlink_to(outside, target_is_directory=True)
    (base / "escape").symlink_to(outside / "secret.txt")
    return base, outside


@pytest.mark.req("RES-7", "ROOT-6")
def test_resource_uris_cannot_leave_the_served_folder(folders):
    base, outside = folders
    server = fuzz_target.build(str(base))
    client_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        with Client(client_end, timeout=WAIT) as client:
            inside = client.read_resource(path_to_uri(base / "inside.txt"))
            assert [c.to_dict()["blob"] for c in inside.contents] == ["aW5zaWRl"]        # b"inside"
            for pattern in TRAVERSALS:
                uri = pattern.format(base=str(base).lstrip("/"), outside=str(outside).lstrip("/"))
                try:
                    result = client.read_resource(uri)
                except McpError as exc:
                    assert exc.code in (-32002, -32602), (uri, exc.code, exc)
                    continue
                dumped = json.dumps([c.to_dict() for c in result.contents])
                assert "SECRET" not in dumped and "U0VDUkVU" not in dumped, (uri, dumped)
    finally:
        session.close()


@pytest.mark.req("ROOT-5", "ROOT-6")
def test_roots_checks_refuse_traversal_encoded_separators_and_symlinks(folders):
    base, outside = folders
    roots = [path_to_uri(base)]
    assert require_inside(base / "inside.txt", roots) == os.path.realpath(base / "inside.txt")
    attacks = [base / ".." / "secret.txt", base / "sub" / ".." / ".." / "secret.txt", base / "link" / "secret.txt",
               base / "escape", outside / "secret.txt", str(base) + "/../secret.txt",
               path_to_uri(base) + "/%2e%2e/secret.txt", path_to_uri(base) + "/..%2fsecret.txt",
               path_to_uri(base) + "%2f..%2fsecret.txt", path_to_uri(base / "link") + "/secret.txt",
               str(base) + "-evil/secret.txt", str(base) + "/sub/../../outside/secret.txt"]
    for attack in attacks:
        with pytest.raises((PathOutsideRoots, ValueError)):
            require_inside(attack, roots)
    with pytest.raises(ValueError):
        require_inside("relative/../../etc/passwd", roots)


# ---------------------------------------------------------------------- catastrophic backtracking
@pytest.mark.req("RES-7")
def test_a_uri_built_for_backtracking_stalls_neither_its_handler_nor_the_server():
    """The template ``cat://{v0}...{v9}`` and a long URI that cannot match: a
    backtracking matcher tries every split of the piece among ten variables. The
    server must keep serving others (ping), and the read must be answered within
    the client's timeout."""
    client = Client.stdio(TARGET, env=_env(), timeout=WAIT)
    try:
        with client:
            outcome = []

            def read():
                try:
                    client.read_resource("cat://" + "a" * 60 + "/", timeout=3)
                except McpError as exc:
                    outcome.append(exc.code)

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            client.ping(timeout=3)                       # meanwhile the pool still serves others
            reader.join(WAIT)
            assert len(outcome) == 1 and outcome[0] in (-32002, -32602), outcome    # not found, per revision
            assert client.read_resource("cat://" + "a" * 60).contents[0].text.endswith("|a" * 9)
    finally:
        client.close()


# ---------------------------------------------------------------------- elicitation answers
@pytest.mark.req("ELIC-53", "ELIC-52")
def test_elicitation_answers_that_break_the_schema_are_refused():
    server = fuzz_target.build()
    peer_end, server_end = memory_pair()
    session = server.serve(server_end)
    try:
        peer = fuzzing.memory_peer(peer_end)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "#init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "fuzz", "version": "1"}}}).encode())
        while peer.recv(WAIT).get("id") != "#init":
            pass
        peer.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        out = fuzzing.fuzz_elicitation(peer, SEED + 5, 150)
    finally:
        session.close()
    assert out["problems"] == [], _report(out, SEED + 5)
    assert out["refused"] > 50 and out["accepted"] > 5


# ---------------------------------------------------------------------- found by fuzzing
def _scripted_client(answers: dict, **options):
    """A ``Client`` whose peer answers each method with ``answers[method]`` (a result dict)
    after a valid handshake; returns ``(client, peer_end)``."""
    client_end, peer_end = memory_pair()
    results = dict(fuzzing.SERVER_RESULTS, **answers)

    def serve():
        inbox = peer_end._inbox
        while True:
            raw = inbox.get()
            if not isinstance(raw, str):
                return
            message = json.loads(raw)
            if "method" in message and "id" in message:
                peer_end.send_raw(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                              "result": results.get(message["method"], {})}))
    threading.Thread(target=serve, daemon=True).start()
    options.setdefault("protocol_version", "2025-11-25")     # the scripted peer speaks the handshake era
    return Client(client_end, timeout=WAIT, **options), peer_end


@pytest.mark.req("PAGE-3", "PAGE-4", "TASK-46")
@pytest.mark.parametrize("method, result, call", [
    ("resources/list", {"resources": 5}, lambda c: c.list_resources()),
    ("prompts/list", {"prompts": 1.5}, lambda c: c.list_prompts()),
    ("tools/list", {"tools": 7}, lambda c: c.list_tools()),
    ("resources/list", {"resources": [], "nextCursor": ["not", "a", "string"]}, lambda c: c.list_resources()),
    ("tools/list", {"tools": [], "nextCursor": {"k": 1}}, lambda c: c.list_tools()),
    ("resources/templates/list", {"resourceTemplates": "x"}, lambda c: c.list_resource_templates()),
])
def test_a_malformed_list_result_raises_a_typed_error(method, result, call):
    client, _ = _scripted_client({method: result})
    with client:
        with pytest.raises(McpError):
            call(client)


@pytest.mark.req("SAMP-13")
def test_a_sampling_request_with_a_non_string_content_type_is_invalid_params():
    client_end, peer_end = memory_pair()
    client = Client(client_end, timeout=WAIT, protocol_version="2025-11-25", sampling=lambda request: {
        "role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"})
    peer = fuzzing.memory_peer(peer_end)

    def handshake():
        message = peer.recv(WAIT)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                              "result": fuzzing.SERVER_RESULTS["initialize"]}).encode())
    helper = threading.Thread(target=handshake, daemon=True)
    helper.start()
    with client:
        helper.join(WAIT)
        peer.send(json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": [1, "a"], "text": "hi"}}],
            "maxTokens": 10}}).encode())
        while True:
            message = peer.recv(WAIT)
            if message.get("id") == "s1":
                break
        assert message["error"]["code"] == -32602, message
