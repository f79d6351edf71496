"""Seeded random fuzzing with the standard library: generators, an oracle, and drivers
that throw hostile input at a server (stdio subprocess, in-process, Streamable HTTP)
and at a client (from a hostile server). ``tests/test_fuzz.py`` runs small counts;
``bench/fuzz.py`` runs large ones with the same code.

What every driver checks (Spec: basic/index, basic/transports):

* nothing crashes or hangs: every run ends within its time bound and the peer is
  still serving afterwards;
* every request is answered exactly once, with a result or an error whose code is
  the right one for what was wrong (-32700 unreadable, -32600 not a valid request,
  -32601 unknown method, -32602 bad params, -32002 unknown resource); an internal
  error (-32603) for bad input counts as a failure: it means a handler broke;
* no notification and no response is answered;
* well-formed calls interleaved with the garbage get their exact results.

The oracle is written from the spec, not from mcp_ref's decoder: it classifies each
line by JSON and JSON-RPC rules alone. Random strings hold no lone surrogates and
values nest at most a few levels: those two inputs have dedicated tests.
"""
import json
import queue
import random
import threading
import time
from collections import Counter
from pathlib import Path

WAIT = 20.0
# Client-to-server methods with a valid example of their params (None: no params).
REQUESTS = {
    "ping": None,
    "tools/list": {},
    "tools/call": {"name": "echo", "arguments": {"text": "hi"}},
    "resources/list": {"cursor": None},
    "resources/templates/list": {},
    "resources/read": {"uri": "file:///a.txt"},
    "resources/subscribe": {"uri": "file:///a.txt"},
    "resources/unsubscribe": {"uri": "file:///a.txt"},
    "prompts/list": {},
    "prompts/get": {"name": "greet", "arguments": {"name": "Ada"}},
    "completion/complete": {"ref": {"type": "ref/prompt", "name": "greet"},
                            "argument": {"name": "name", "value": "a"}, "context": {"arguments": {}}},
    "logging/setLevel": {"level": "info"},
    "tasks/get": {"taskId": "t"},
    "tasks/list": {},
    "tasks/cancel": {"taskId": "t"},
    "initialize": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "fuzz", "version": "1"}},
}
EXTRA_CALLS = [{"name": "add", "arguments": {"a": 1, "b": 2}},
               {"name": "shape", "arguments": {"kind": "circle", "size": 3, "tags": ["a"],
                                               "origin": {"x": 1, "y": 2}}}]
NOTIFICATIONS = {
    "notifications/initialized": None,
    "notifications/cancelled": {"requestId": "other-7", "reason": "fuzz"},
    "notifications/progress": {"progressToken": "tok", "progress": 1, "total": 2, "message": "m"},
    "notifications/roots/list_changed": None,
}
ALLOWED_ERRORS = {-32600, -32601, -32602, -32002}
_ALPHABET = "abcxyz019 _-./:\\\"'{}[]%\u00e9\u4e2d\U0001f600\t\n\x00"


def _readable_id(value) -> bool:
    return (isinstance(value, str) or isinstance(value, int)) and not isinstance(value, bool)


class Gen:
    """Random input from one seed (``random.Random``: reproducible per seed)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.made = 0

    def string(self, longest: int = 12) -> str:
        r = self.rng
        if r.random() < 0.05:
            return "x" * r.choice((0, 1, 1000, 10000))
        return "".join(r.choice(_ALPHABET) for _ in range(r.randint(0, longest)))

    def scalar(self):
        r = self.rng
        return r.choice([
            lambda: None, lambda: True, lambda: False, lambda: r.randint(-3, 3),
            lambda: r.choice((2 ** 31, -2 ** 63, 2 ** 64, 10 ** 30)), lambda: r.uniform(-1e6, 1e6),
            lambda: r.choice((0.0, -0.0, 1e308, 5e-324, 1.5)), self.string,
        ])()

    def value(self, depth: int = 0):
        r = self.rng
        if depth >= 3 or r.random() < 0.55:
            return self.scalar()
        if r.random() < 0.5:
            return [self.value(depth + 1) for _ in range(r.randint(0, 4))]
        return {self.string(6): self.value(depth + 1) for _ in range(r.randint(0, 4))}

    def garbage_bytes(self) -> bytes:
        r = self.rng
        kind = r.random()
        if kind < 0.4:
            data = bytes(r.randrange(256) for _ in range(r.randint(0, 80)))
        elif kind < 0.7:                      # JSON-looking text cut short or bent
            text = json.dumps(self.message(), ensure_ascii=r.random() < 0.5)
            cut = r.randint(0, len(text))
            data = (text[:cut] + r.choice(["", "}", "]", ",", "\\", "\"", "\x00", "\xff"])).encode("utf-8",
                                                                                                "surrogatepass")
        else:                                 # invalid UTF-8 inside otherwise valid JSON
            data = b'{"jsonrpc":"2.0","method":"ping","id":"' + bytes([r.choice((0x80, 0xc3, 0xed, 0xff))]) + b'"}'
        return data.replace(b"\n", b" ")

    # -- structurally valid messages, then one mutation
    def message(self) -> dict:
        r = self.rng
        if r.random() < 0.25:
            method = r.choice(sorted(NOTIFICATIONS))
            params = NOTIFICATIONS[method]
            out = {"jsonrpc": "2.0", "method": method}
        else:
            method = r.choice(sorted(REQUESTS))
            params = REQUESTS[method]
            if method == "tools/call" and r.random() < 0.5:
                params = r.choice(EXTRA_CALLS)
            self.made += 1
            out = {"jsonrpc": "2.0", "id": f"#m-{self.made}", "method": method}
        if params is not None:
            out["params"] = json.loads(json.dumps(params))
        return out

    def paths(self, node, prefix=()) -> list:
        out = [prefix] if prefix else []
        if isinstance(node, dict):
            for key, value in node.items():
                out += self.paths(value, prefix + (key,))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                out += self.paths(value, prefix + (index,))
        return out

    def mutate(self, message: dict, path=None) -> dict:
        """One change at ``path`` (random when None): delete it, replace it with a random
        value or one of another type, or add an unknown member beside it."""
        r = self.rng
        message = json.loads(json.dumps(message))
        if path is None:
            paths = self.paths(message)
            inner = [p for p in paths if p[0] == "params"]
            path = r.choice(inner if inner and r.random() < 0.75 else paths)
        parent = message
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        op = r.random()
        if op < 0.2 and isinstance(parent, dict):
            del parent[key]
        elif op < 0.3 and isinstance(parent, dict):
            parent[self.string(8) or "extra"] = self.value()
        elif op < 0.55:
            current = parent[key]
            others = [v for v in (None, True, 7, -1.5, "s", [], {}, [1, "a"], {"k": "v"})
                      if type(v) is not type(current)]
            parent[key] = r.choice(others)
        else:
            parent[key] = self.value()
        return message


# ---------------------------------------------------------------------- the oracle
def expect_line(data: bytes, known=REQUESTS):
    """What a server must answer to one line: ``("none",)``, ``("null", codes)`` (one
    error without a readable id), ``("id", id, codes)`` (one answer for that id; codes
    None means a result or an allowed error), by the spec alone."""
    data = data.strip()
    if not data:
        return ("none",)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return ("null", {-32700})
    return expect_value(value, known)


def expect_value(value, known=REQUESTS):
    """``expect_line`` for a decoded value; ``known``: the methods the receiver serves."""
    if isinstance(value, list):
        return ("null", {-32600})                # no batches in 2025-11-25: one error
    if not isinstance(value, dict):
        return ("null", {-32600})
    raw_id = value.get("id")
    readable = raw_id if _readable_id(raw_id) else None

    def invalid():
        return ("id", readable, {-32600}) if readable is not None else ("null", {-32600})
    if "method" not in value and ("result" in value) != ("error" in value):
        return ("none",)      # shaped like a response, even a bad one: an error with its id would be
        #                       matched by the peer to a request of its own (spec_notes/messages.md)
    if value.get("jsonrpc") != "2.0":
        return invalid()
    if "method" in value:
        if not isinstance(value["method"], str):
            return invalid()
        if "params" in value and not isinstance(value["params"], dict):
            return invalid()
        if "id" not in value:
            return ("none",)                     # a notification: never answered
        if readable is None:
            return ("null", {-32600})
        return ("id", readable, None if value["method"] in known else {-32601})
    return invalid()


class Tally:
    """Answers expected and seen, checked once everything was read."""

    def __init__(self, allowed=ALLOWED_ERRORS):
        self.allowed = allowed
        self.expected_ids: Counter = Counter()
        self.codes: dict = {}                    # id -> allowed codes (None: result or ALLOWED_ERRORS)
        self.expected_null = 0
        self.null_codes: list = []
        self.seen_ids: Counter = Counter()
        self.answers: dict = {}                  # id -> the error codes (or "result") answered
        self.problems: list = []
        self.sent = 0

    def expect(self, expectation, what: str) -> None:
        self.sent += 1
        if expectation[0] == "null":
            self.expected_null += 1
            self.null_codes.append((expectation[1], what))
        elif expectation[0] == "id":
            _, rid, codes = expectation
            key = json.dumps(rid)
            self.expected_ids[key] += 1
            self.codes.setdefault(key, []).append((codes, what, None))

    def take(self, message) -> None:
        if not isinstance(message, dict) or "method" in message:
            return                               # the server's own notifications/requests
        if "id" not in message or message.get("id") is None:
            code = (message.get("error") or {}).get("code")
            self.seen_ids["null"] += 1
            if self.seen_ids["null"] <= len(self.null_codes):
                codes, what = self.null_codes[self.seen_ids["null"] - 1]
                if code not in {-32700, -32600}:
                    self.problems.append(f"error without id has code {code}: {message} (for {what[:200]})")
            return
        key = json.dumps(message["id"])
        self.seen_ids[key] += 1
        entries = self.codes.get(key)
        if not entries:
            self.problems.append(f"answer to an id never sent as a request: {json.dumps(message)[:300]}")
            return
        # Answers to one id may come in any order (requests run on a pool, a ping's answer
        # on the control thread): they are matched to the lines sent with that id in check().
        self.answers.setdefault(key, []).append(message["error"].get("code") if "error" in message else "result")

    def _unmatched(self, key) -> list:
        """The answers to ``key`` no line sent with that id allows, once each answer is
        matched to one line (a bipartite matching: answers to one id come in any order)."""
        entries, answers = self.codes[key], self.answers.get(key, [])

        def fits(answer, entry) -> bool:
            codes = entry[0]
            if answer == "result":
                return codes is None
            return answer in (self.allowed if codes is None else codes)
        owner: dict = {}                              # entry index -> answer index

        def place(i, seen) -> bool:
            for j, entry in enumerate(entries):
                if j not in seen and fits(answers[i], entry):
                    seen.add(j)
                    if j not in owner or place(owner[j], seen):
                        owner[j] = i
                        return True
            return False
        return [answers[i] for i in range(len(answers)) if not place(i, set())]

    def satisfied(self) -> bool:
        return all(self.seen_ids[k] >= n for k, n in self.expected_ids.items()) and \
            self.seen_ids["null"] >= self.expected_null

    def check(self) -> list:
        problems = list(self.problems)
        for key in self.answers:
            for answer in self._unmatched(key):
                what = [w[:300] for _, w, _ in self.codes[key]]
                problems.append(f"{'a result' if answer == 'result' else f'code {answer}'} for none of {what}")
        for key, count in self.expected_ids.items():
            if self.seen_ids[key] != count:
                problems.append(f"id {key}: {self.seen_ids[key]} answers, expected {count}: "
                                f"{[w[:200] for _, w, _ in self.codes[key]]}")
        if self.seen_ids["null"] != self.expected_null:
            problems.append(f"{self.seen_ids['null']} errors without id, expected {self.expected_null}")
        return problems


# ---------------------------------------------------------------------- driving a server over lines
class LinePeer:
    """A server behind raw lines: ``send(bytes)``; ``recv(timeout)`` gives a dict, or None at EOF."""

    def __init__(self, write, messages: queue.Queue):
        self.write, self.messages = write, messages

    def send(self, data: bytes) -> None:
        self.write(data + b"\n")

    def recv(self, timeout: float):
        try:
            item = self.messages.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the server sent nothing within {timeout:g} s") from None
        if item is None:
            self.messages.put(None)
        return item


def stdio_peer(process) -> LinePeer:
    """A ``LinePeer`` over a subprocess's pipes (a reader thread parses stdout)."""
    messages: queue.Queue = queue.Queue()

    def read():
        for line in process.stdout:
            try:
                messages.put(json.loads(line))
            except ValueError:
                messages.put({"unparseable": line[:200].decode("utf-8", "replace")})
        messages.put(None)
    threading.Thread(target=read, name="fuzz-reader", daemon=True).start()

    def write(data: bytes) -> None:
        process.stdin.write(data)
        process.stdin.flush()
    return LinePeer(write, messages)


def memory_peer(peer_end) -> LinePeer:
    """A ``LinePeer`` over one end of ``memory_pair()`` (the other served by a Server)."""
    messages: queue.Queue = queue.Queue()
    inbox = peer_end._inbox

    def pump():
        while True:
            line = inbox.get()
            if not isinstance(line, str):
                messages.put(None)
                return
            try:
                messages.put(json.loads(line))
            except ValueError:
                messages.put({"unparseable": line[:200]})
    threading.Thread(target=pump, name="fuzz-reader", daemon=True).start()

    def write(data: bytes) -> None:
        data = data.strip()                      # framing is the transport's: as stdio does
        if data:
            peer_end.send_raw(data)              # bytes: decoded (and refused) as stdio bytes are
    return LinePeer(write, messages)


def initialize(peer: LinePeer) -> dict:
    peer.send(json.dumps({"jsonrpc": "2.0", "id": "#init", "method": "initialize",
                          "params": REQUESTS["initialize"]}).encode())
    while True:
        message = peer.recv(WAIT)
        assert message is not None, "the server closed during initialize"
        if message.get("id") == "#init":
            assert "result" in message, message
            break
    peer.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return message["result"]


def every_field(gen: Gen) -> list:
    """One mutant per field of every method's valid message (envelope fields included),
    each field deleted, retyped or replaced once: "every field of every method"."""
    out = []
    for method in sorted(REQUESTS) + sorted(NOTIFICATIONS):
        params = REQUESTS.get(method, NOTIFICATIONS.get(method))
        base = {"jsonrpc": "2.0", "method": method}
        if method in REQUESTS:
            base["id"] = f"#every-{len(out)}"
        if params is not None:
            base["params"] = params
        for path in gen.paths(base):
            out.append(gen.mutate(base, path))
    return out


def fuzz_lines(peer: LinePeer, seed, count: int, kinds=("bytes", "value", "mutant", "mutant", "mutant"),
               deadline: float = 15.0, every: bool = False,
               good_every: int = 7) -> dict:
    """Send ``count`` hostile lines (with a well-formed call every ``good_every``),
    then read until every answer is in; returns figures and ``problems``."""
    gen = Gen(seed)
    tally = Tally()
    good: dict = {}
    pending_good = []
    systematic = every_field(gen) if every else []
    for n in range(count + len(systematic)):
        kind = "every" if n < len(systematic) else gen.rng.choice(kinds)
        if kind == "every":
            message = systematic[n]
            data = json.dumps(message).encode()
            expectation = expect_value(message)
        elif kind == "bytes":
            data = gen.garbage_bytes()
            expectation = expect_line(data)
        elif kind == "value":
            value = gen.value()
            if isinstance(value, dict) and gen.rng.random() < 0.5:
                value.setdefault("jsonrpc", "2.0")
            data = json.dumps(value, ensure_ascii=gen.rng.random() < 0.5).encode()
            expectation = expect_value(value)
        else:
            message = gen.mutate(gen.message())
            data = json.dumps(message, ensure_ascii=gen.rng.random() < 0.5).encode()
            expectation = expect_value(message)
        tally.expect(expectation, data.decode("utf-8", "replace"))
        peer.send(data)
        if good_every and n % good_every == 0:
            rid = f"#good-{n}"
            text = f"still here {n} \u00e9"
            good[json.dumps(rid)] = text
            pending_good.append(rid)
            peer.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                  "params": {"name": "echo", "arguments": {"text": text}}}).encode())
    for sync in ("#sync-1", "#sync-2"):
        good[json.dumps(sync)] = None
        peer.send(json.dumps({"jsonrpc": "2.0", "id": sync, "method": "ping"}).encode())
        end = time.monotonic() + deadline
        seen_sync = False
        while not (seen_sync and tally.satisfied()):
            left = end - time.monotonic()
            if left <= 0:
                tally.problems.append(f"not every answer arrived within {deadline:g} s")
                break
            try:
                message = peer.recv(left)
            except AssertionError:
                tally.problems.append(f"not every answer arrived within {deadline:g} s")
                break
            if message is None:
                tally.problems.append("the server closed its output")
                break
            key = json.dumps(message.get("id")) if isinstance(message, dict) else None
            if key in good:
                if good[key] is None:
                    seen_sync = seen_sync or key == json.dumps(sync)
                    if message.get("result") != {}:
                        tally.problems.append(f"ping answered {message}")
                elif (message.get("result") or {}).get("content") != [{"type": "text", "text": good[key]}]:
                    tally.problems.append(f"a well-formed call got {json.dumps(message)[:300]}")
                else:
                    good[key] = "answered"
                continue
            if isinstance(message, dict) and "unparseable" in message:
                tally.problems.append(f"the server wrote a line that is not JSON: {message['unparseable']}")
                continue
            tally.take(message)
    unanswered = [k for k, v in good.items() if v not in (None, "answered")]
    if unanswered:
        tally.problems.append(f"well-formed calls never answered: {unanswered[:5]}")
    return {"sent": tally.sent, "good": len(pending_good), "problems": tally.check()}


# ---------------------------------------------------------------------- driving a server over Streamable HTTP
def fuzz_http(url: str, seed, count: int, good_every: int = 7, timeout: float = 10.0) -> dict:
    """POST ``count`` hostile bodies to a Streamable HTTP endpoint, one per request,
    in one session, with a well-formed call every ``good_every``; check each answer:
    a request gets 200 with exactly one response for its id (JSON or SSE), a
    notification or response 202 without a body, anything unreadable or invalid a
    4xx with a JSON-RPC error without id (Spec: basic/transports#sending-messages-to-the-server)."""
    import requests
    from mcp_ref.transports.http.sse import EventParser
    gen = Gen(seed)
    problems: list = []
    base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = requests.post(url, data=json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                               "params": REQUESTS["initialize"]}), headers=base, timeout=timeout)
    assert init.status_code == 200, init.text
    headers = dict(base, **{"Mcp-Session-Id": init.headers["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"})
    assert requests.post(url, data='{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=headers,
                         timeout=timeout).status_code == 202

    def answers(response) -> list:
        kind = response.headers.get("Content-Type", "")
        if kind.startswith("application/json"):
            body = response.json()
            return body if isinstance(body, list) else [body]
        if kind.startswith("text/event-stream"):
            return [json.loads(e.data) for e in EventParser().feed(response.content) if e.data]
        return []

    sent = 0
    for n in range(count):
        kind = gen.rng.choice(("bytes", "value", "mutant", "mutant", "mutant"))
        if kind == "bytes":
            data = gen.garbage_bytes()
            expectation = expect_line(data)
        elif kind == "value":
            value = gen.value()
            data = json.dumps(value).encode()
            expectation = expect_value(value)
        else:
            message = gen.mutate(gen.message())
            data = json.dumps(message).encode()
            expectation = expect_value(message)
        if expectation[0] == "none" and not data.strip():
            expectation = ("null", {-32700})        # an empty body is not "a blank line": it is unreadable
        what = data.decode("utf-8", "replace")[:300]
        try:
            response = requests.post(url, data=data, headers=headers, timeout=timeout)
        except requests.RequestException as exc:
            problems.append(f"POST failed ({exc}) for {what}")
            continue
        sent += 1
        got = [m for m in answers(response) if isinstance(m, dict) and "method" not in m]
        status = response.status_code
        if expectation[0] == "none":
            message = json.loads(data) if data.strip() else None
            response_shaped = isinstance(message, dict) and "method" not in message
            if status != 202 and not (response_shaped and status == 400):
                problems.append(f"status {status} {response.text[:200]!r} for a notification/response: {what}")
        elif expectation[0] == "null" or (expectation[0] == "id" and expectation[2] == {-32600}):
            codes = expectation[1] if expectation[0] == "null" else {-32600}
            if not 400 <= status < 500 or len(got) != 1 or (got[0].get("error") or {}).get("code") not in codes:
                problems.append(f"status {status} {response.text[:200]!r} where a 4xx with {sorted(codes)} "
                                f"was due: {what}")
        else:
            _, rid, codes = expectation
            mine = [m for m in got if m.get("id") == rid]
            if status != 200 or len(mine) != 1:
                problems.append(f"status {status}, {len(mine)} answers for id {rid!r}: {response.text[:200]!r} "
                                f"for {what}")
            elif "error" in mine[0]:
                code = mine[0]["error"].get("code")
                if code not in (ALLOWED_ERRORS if codes is None else codes):
                    problems.append(f"code {code} ({mine[0]['error'].get('message')!r}) for {what}")
            elif codes is not None:
                problems.append(f"a result where {sorted(codes)} was due: {what}")
        if good_every and n % good_every == 0:
            text = f"still here {n}"
            good = requests.post(url, headers=headers, timeout=timeout, data=json.dumps(
                {"jsonrpc": "2.0", "id": f"#good-{n}", "method": "tools/call",
                 "params": {"name": "echo", "arguments": {"text": text}}}))
            found = [m for m in answers(good) if m.get("id") == f"#good-{n}"]
            if not found or (found[0].get("result") or {}).get("content") != [{"type": "text", "text": text}]:
                problems.append(f"a well-formed call after {what!r} got {good.status_code} {good.text[:200]!r}")
    return {"sent": sent, "problems": problems}


# ---------------------------------------------------------------------- a hostile server against a client
SERVER_RESULTS = {
    "initialize": {"protocolVersion": "2025-11-25", "serverInfo": {"name": "hostile", "version": "6.6.6"},
                   "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True},
                                    "prompts": {}, "completions": {}, "logging": {}}},
    "tools/list": {"tools": [{"name": "echo", "inputSchema": {"type": "object"},
                              "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]},
    "tools/call": {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"n": 1}},
    "resources/list": {"resources": [{"uri": "file:///a", "name": "a"}], "nextCursor": "c"},
    "resources/read": {"contents": [{"uri": "file:///a", "text": "x"}, {"uri": "file:///b", "blob": "AA=="}]},
    "prompts/list": {"prompts": [{"name": "p", "arguments": [{"name": "x", "required": True}]}]},
    "prompts/get": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
    "completion/complete": {"completion": {"values": ["a"], "total": 1, "hasMore": False}},
    "ping": {}, "logging/setLevel": {},
}
SERVER_REQUESTS = {
    "sampling/createMessage": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                               "maxTokens": 10},
    "elicitation/create": {"message": "m", "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}},
    "roots/list": None,
    "ping": None,
    "x/unknown": {},
}
CLIENT_SERVES = ("sampling/createMessage", "elicitation/create", "roots/list", "ping")
SERVER_NOTIFICATIONS = {
    "notifications/message": {"level": "info", "data": "d", "logger": "l"},
    "notifications/progress": {"progressToken": 1, "progress": 1},
    "notifications/resources/updated": {"uri": "file:///a"},
    "notifications/tools/list_changed": None,
    "notifications/cancelled": {"requestId": 1},
    "notifications/elicitation/complete": {"elicitationId": "e"},
    "notifications/tasks/status": {"taskId": "t", "status": "working", "createdAt": "2025-01-01T00:00:00Z",
                                   "lastUpdatedAt": "2025-01-01T00:00:00Z", "ttl": None},
}


def _client_ops(client) -> list:
    return [lambda: client.list_tools(), lambda: client.call_tool("echo", {}), lambda: client.list_resources(),
            lambda: client.read_resource("file:///a"), lambda: client.list_prompts(),
            lambda: client.get_prompt("p", {"x": "1"}), lambda: client.ping(),
            lambda: client.complete({"type": "ref/prompt", "name": "p"}, ("x", "a")),
            lambda: client.set_logging_level("info")]


def fuzz_client(seed, cases: int, timeout: float = 0.5) -> dict:
    """A hostile in-process server against a real ``Client``, ``cases`` times: it
    answers the client's requests with valid, mutated, duplicated, misaddressed,
    erroneous or garbage replies (or none), and sends mutated requests and
    notifications of its own. Checks: every client call returns or raises a typed
    error (``McpError`` or ``SessionError``) within its timeout, never anything
    else and never a hang; every server request gets exactly one answer with a
    result or an allowed error code; the client answers no notification."""
    from mcp_ref import Client
    from mcp_ref.errors import McpError, SessionError
    from mcp_ref.transports import memory_pair
    problems: list = []
    calls = 0
    for case in range(cases):
        gen = Gen(f"{seed}:{case}")
        r = gen.rng
        client_end, server_end = memory_pair()
        tally = Tally(allowed={-32600, -32601, -32602, -1})
        stop = threading.Event()

        def line(message) -> None:
            if isinstance(message, (str, bytes)):
                data = message if isinstance(message, bytes) else message.encode("utf-8", "surrogatepass")
                tally.expect(expect_line(data, CLIENT_SERVES), data.decode("utf-8", "replace"))
                server_end.send_raw(message)
            else:
                tally.expect(expect_value(message, CLIENT_SERVES), json.dumps(message))
                server_end.send_raw(json.dumps(message))

        def inject() -> None:
            if r.random() < 0.5:
                method = r.choice(sorted(SERVER_REQUESTS))
                message = {"jsonrpc": "2.0", "id": f"#srv-{gen.made}", "method": method}
                gen.made += 1
                if SERVER_REQUESTS[method] is not None:
                    message["params"] = SERVER_REQUESTS[method]
            else:
                method = r.choice(sorted(SERVER_NOTIFICATIONS))
                message = {"jsonrpc": "2.0", "method": method}
                if SERVER_NOTIFICATIONS[method] is not None:
                    message["params"] = SERVER_NOTIFICATIONS[method]
            line(gen.mutate(message) if r.random() < 0.7 else message)

        def reply(request: dict) -> None:
            method, rid = request.get("method"), request.get("id")
            result = SERVER_RESULTS.get(method, {})
            choice = r.random()
            if method == "initialize" and choice < 0.6:
                line({"jsonrpc": "2.0", "id": rid, "result": result})
            elif choice < 0.3:
                line({"jsonrpc": "2.0", "id": rid, "result": result})
            elif choice < 0.55:
                line(gen.mutate({"jsonrpc": "2.0", "id": rid, "result": result}))
            elif choice < 0.65:
                line({"jsonrpc": "2.0", "id": rid, "error": {"code": r.choice((-32603, -32602, -1, 7, -32002)),
                                                               "message": gen.string(), "data": gen.value()}})
            elif choice < 0.72:
                line({"jsonrpc": "2.0", "id": rid, "result": result})
                line({"jsonrpc": "2.0", "id": rid, "result": result})
            elif choice < 0.8:
                line({"jsonrpc": "2.0", "id": gen.value(), "result": gen.value()})
            elif choice < 0.9:
                line(gen.garbage_bytes().strip() or b"x")
            # else: no answer at all (the client's timeout must end the call)
            if r.random() < 0.3:
                inject()

        def hostile() -> None:
            inbox = server_end._inbox
            while not stop.is_set():
                try:
                    raw = inbox.get(timeout=0.05)
                except queue.Empty:
                    continue
                if not isinstance(raw, str):
                    return
                try:
                    message = json.loads(raw)
                except ValueError:
                    tally.problems.append(f"the client wrote a line that is not JSON: {raw[:200]}")
                    continue
                if not isinstance(message, dict):
                    tally.problems.append(f"the client sent a non-object: {raw[:200]}")
                elif "method" in message:
                    if "id" in message:
                        reply(message)
                else:
                    tally.take(message)

        worker = threading.Thread(target=hostile, name="fuzz-hostile-server", daemon=True)
        worker.start()
        client = Client(client_end, timeout=timeout, init_timeout=timeout, roots=["file:///tmp"],
                        sampling=lambda request: {"role": "assistant", "content": {"type": "text", "text": "ok"},
                                                  "model": "m"},
                        elicitation=lambda request: {"action": "decline"})

        def drive() -> None:
            nonlocal calls
            try:
                client.connect()
            except (McpError, SessionError):
                return
            except Exception as exc:            # noqa: BLE001 (the finding itself)
                problems.append(f"case {case}: connect raised {type(exc).__name__}: {exc}")
                return
            for op in _client_ops(client):
                calls += 1
                try:
                    op()
                except (McpError, SessionError):
                    pass
                except Exception as exc:        # noqa: BLE001
                    import traceback
                    where = traceback.extract_tb(exc.__traceback__)[-1]
                    problems.append(f"case {case}: a call raised {type(exc).__name__}: {exc} "
                                    f"(at {Path(where.filename).name}:{where.lineno} {where.name})")
        runner = threading.Thread(target=drive, name="fuzz-client-driver", daemon=True)
        runner.start()
        runner.join(timeout * 30 + 10)
        if runner.is_alive():
            problems.append(f"case {case}: the client hung")
        end = time.monotonic() + 5
        while time.monotonic() < end and not tally.satisfied() and not client.closed:
            time.sleep(0.01)
        client.close()
        stop.set()
        worker.join(5)
        if client.closed and not tally.satisfied():
            # a client that closed (a failed handshake) owes nothing more
            tally.expected_ids = Counter({k: min(v, tally.seen_ids[k]) for k, v in tally.expected_ids.items()})
            tally.expected_null = min(tally.expected_null, tally.seen_ids["null"])
        problems.extend(f"case {case}: {p}" for p in tally.check())
    return {"cases": cases, "calls": calls, "problems": problems}


# ---------------------------------------------------------------------- elicitation answers against their schema
def form_problem(content) -> str:
    """An independent check of ``fuzz_target.FORM`` (not mcp_ref's validator)."""
    if not isinstance(content, dict):
        return "not an object"
    if set(content) - {"name", "age", "color"}:
        return "unknown member"
    name, age = content.get("name"), content.get("age")
    if not isinstance(name, str) or not 1 <= len(name) <= 20:
        return "name"
    if isinstance(age, bool) or not isinstance(age, (int, float)) or age != int(age) or not 0 <= age <= 150:
        return "age"
    if "color" in content and content["color"] not in ("red", "green"):
        return "color"
    return ""


def fuzz_elicitation(peer: LinePeer, seed, count: int, timeout: float = WAIT) -> dict:
    """Call ``ask`` ``count`` times; answer each ``elicitation/create`` with a random,
    mostly schema-breaking answer. The call must end with a result: the answer's
    content when it fits the form, an ``isError`` result naming the problem when it
    does not, never a JSON-RPC error and never an internal error."""
    gen = Gen(seed)
    r = gen.rng
    problems, accepted, refused = [], 0, 0
    good = {"name": "Ada", "age": 36, "color": "red"}
    for n in range(count):
        peer.send(json.dumps({"jsonrpc": "2.0", "id": f"#ask-{n}", "method": "tools/call",
                              "params": {"name": "ask", "arguments": {}}}).encode())
        answer = None
        while True:
            message = peer.recv(timeout)
            if message is None:
                problems.append("the server closed")
                return {"calls": n, "problems": problems}
            if message.get("method") == "elicitation/create":
                content = gen.mutate(good) if r.random() < 0.8 else gen.value()
                action = r.choice(["accept"] * 6 + ["decline", "cancel", "maybe", 7])
                result = {"action": action}
                if action == "accept" or r.random() < 0.2:
                    result["content"] = content
                if r.random() < 0.2:
                    result = gen.mutate(result)
                answer = result
                peer.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())
            elif message.get("id") == f"#ask-{n}":
                break
        what = json.dumps(answer)[:300]
        if "result" not in message:
            problems.append(f"a JSON-RPC error {message.get('error')} after the answer {what}")
            continue
        result = message["result"]
        text = (result.get("content") or [{}])[0].get("text", "")
        # members beside action and content are allowed (a result may carry more)
        fits = isinstance(answer, dict) and answer.get("action") == "accept" and not form_problem(answer.get("content"))
        if result.get("isError"):
            refused += 1
            if fits:
                problems.append(f"a fitting answer was refused: {what} -> {text[:200]}")
            if "Internal error" in text:
                problems.append(f"an internal error for {what}")
        else:
            accepted += 1
            if text.startswith("accept") and not fits:
                problems.append(f"content that breaks the form was accepted: {what} -> {text[:200]}")
    return {"calls": count, "accepted": accepted, "refused": refused, "problems": problems}
