"""Thread-per-call stdio clients in plain stdlib: the floors of bench_client_threads.py.

Each class drives one initialized ``bench_growth.StdioServer`` (speaking
2025-11-25) with ``call_tool(name, arguments) -> result dict``, callable from
many threads at once. None has MCP types, timeouts or cancellation: they show
what any blocking client called from many threads costs in CPython, and which
way of writing and reading moves that cost. Three choices, combined:

* writing: ``locked`` -- each caller writes its own line under a lock (one
  ``os.write`` per request); ``combined`` -- a caller appends its line to a
  shared outbox, and the caller that finds no writer active becomes the
  writer and writes everything pending in one ``os.write``, looping until
  the outbox is empty; the others go straight to waiting for their reply.
* reading, with a dedicated reading thread: ``lines`` -- it iterates the
  buffered stdout line by line and wakes each caller as its reply is parsed;
  ``chunks`` -- it reads up to 64 KiB with ``os.read``, parses every whole
  line in it, then wakes all the callers whose replies arrived.
* reading without one (``leader``): a waiting caller that finds nobody
  reading becomes the leader: it reads chunks, hands replies to their owners
  (waking them), returns when its own has come and passes leadership to
  another waiting caller.

Why batching matters is the server's side: a server reads its input in
chunks (a buffered ``readline``), so requests written together are read
with one system call and one wake-up, and replies written while the client
is busy reach it together. The raw pipelined client writes from one thread
and reads with a buffered ``readline``: it never pays a thread switch.
"""
import _thread
import itertools
import json
import os
import threading

__all__ = ["FLOORS", "make_floor"]


class _Floor:
    """The common part: ids, encoding, the table of waiting calls."""

    def __init__(self, server):
        self.server = server
        self._in = server.proc.stdin.fileno()
        self._out = server.proc.stdout.fileno()
        self._ids = itertools.count(1 << 40)      # clear of the ids the raw driver uses
        self._waiting: dict = {}
        self._state = _thread.allocate_lock()      # the outbox, the table, who leads
        self._outbox: list = []
        self._writing = False

    def _encode(self, request_id: int, name: str, arguments: dict) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}}).encode() + b"\n"

    def _write_all(self, data) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._in, view):]

    # writing: locked
    def _write_locked(self, data: bytes) -> None:
        with self._write_lock:
            self._write_all(data)

    # writing: combined
    def _write_combined(self, data: bytes) -> None:
        state = self._state
        with state:
            self._outbox.append(data)
            if self._writing:
                return                                # the active writer takes it
            self._writing = True
        while True:
            with state:
                if not self._outbox:
                    self._writing = False
                    return
                lines, self._outbox = self._outbox, []
            self._write_all(lines[0] if len(lines) == 1 else b"".join(lines))


class _ReaderFloor(_Floor):
    """A dedicated reading thread settles each call's slot ``[lock, reply]``."""

    def __init__(self, server, write: str, read: str):
        super().__init__(server)
        self._write_lock = threading.Lock()
        self.write = self._write_combined if write == "combined" else self._write_locked
        target = self._read_chunks if read == "chunks" else self._read_lines
        threading.Thread(target=target, daemon=True).start()

    def _read_lines(self) -> None:
        waiting = self._waiting
        for line in self.server.proc.stdout:
            reply = json.loads(line)
            slot = waiting.pop(reply.get("id"), None)
            if slot is not None:
                slot[1] = reply
                slot[0].release()

    def _read_chunks(self) -> None:
        waiting, rest, loads = self._waiting, b"", json.loads
        while True:
            data = os.read(self._out, 65536)
            if not data:
                return
            lines = (rest + data).split(b"\n")
            rest = lines.pop()
            slots = []
            for line in lines:
                reply = loads(line)
                slot = waiting.pop(reply.get("id"), None)
                if slot is not None:
                    slot[1] = reply
                    slots.append(slot)
            for slot in slots:
                slot[0].release()

    def call_tool(self, name: str, arguments: dict) -> dict:
        request_id = next(self._ids)
        done = _thread.allocate_lock()
        done.acquire()
        slot = self._waiting[request_id] = [done, None]
        self.write(self._encode(request_id, name, arguments))
        if not done.acquire(True, 30):
            raise RuntimeError("no reply in 30 s")
        return slot[1]["result"]


class _Slot:
    __slots__ = ("lock", "reply", "sleeping")

    def __init__(self):
        self.lock = _thread.allocate_lock()
        self.lock.acquire()
        self.reply = None
        self.sleeping = False


class _LeaderFloor(_Floor):
    """No reading thread: a waiting caller reads for everyone (leader/follower)."""

    def __init__(self, server, write: str):
        super().__init__(server)
        self._write_lock = threading.Lock()
        self.write = self._write_combined if write == "combined" else self._write_locked
        self._leading = False
        self._rest = b""

    def call_tool(self, name: str, arguments: dict) -> dict:
        request_id = next(self._ids)
        slot = _Slot()
        state, waiting = self._state, self._waiting
        with state:
            waiting[request_id] = slot
        self.write(self._encode(request_id, name, arguments))
        with state:
            if slot.reply is not None:
                return slot.reply["result"]
            lead = not self._leading
            if lead:
                self._leading = True
            else:
                slot.sleeping = True
        if not lead:
            if not slot.lock.acquire(True, 30):
                raise RuntimeError("no reply in 30 s")
            if slot.reply is not None:
                return slot.reply["result"]
            # promoted: self._leading was kept True on our behalf
        loads, rest = json.loads, self._rest
        try:
            while slot.reply is None:
                data = os.read(self._out, 65536)
                if not data:
                    raise RuntimeError("the server closed stdout")
                lines = (rest + data).split(b"\n")
                rest = lines.pop()
                replies = [loads(line) for line in lines]
                with state:
                    for reply in replies:
                        owner = waiting.pop(reply.get("id"), None)
                        if owner is None:
                            continue
                        owner.reply = reply
                        if owner.sleeping:
                            owner.sleeping = False
                            owner.lock.release()
        finally:
            self._rest = rest
            with state:
                self._leading = False
                for other in waiting.values():
                    if other.sleeping:                 # pass leadership on
                        other.sleeping = False
                        self._leading = True
                        other.lock.release()
                        break
        return slot.reply["result"]


FLOORS = {
    "floor": lambda server: _ReaderFloor(server, "locked", "lines"),        # the original threaded floor
    "combine": lambda server: _ReaderFloor(server, "combined", "lines"),    # (a)
    "chunks": lambda server: _ReaderFloor(server, "locked", "chunks"),      # (b)
    "combine+chunks": lambda server: _ReaderFloor(server, "combined", "chunks"),   # (a)+(b)
    "leader": lambda server: _LeaderFloor(server, "locked"),                # (c)
    "combine+leader": lambda server: _LeaderFloor(server, "combined"),      # (a)+(c)
}


def make_floor(kind: str, server):
    return FLOORS[kind](server)
