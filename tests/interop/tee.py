"""A stdio relay that records the conversation: run a server behind it and every line
either side writes is appended to a log file.

Usage::

    python tests/interop/tee.py LOGFILE -- SERVER_ARGV...

The relay spawns ``SERVER_ARGV``, copies its own stdin to the server's stdin and the
server's stdout to its own stdout, line by line, and appends each line to ``LOGFILE``
as one JSON object ``{"from": "client" | "server", "line": "<the line>"}``. The
server's stderr is inherited. When the client closes the relay's stdin, the server's
stdin is closed; the relay exits with the server's exit code once the server's stdout
ends. Standard library only.
"""
import json
import os
import subprocess
import sys
import threading


def main(argv) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log_path, server_argv = argv[0], argv[2:]
    log = open(log_path, "a", encoding="utf-8")
    lock = threading.Lock()

    def record(side: str, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line.strip():
            return
        with lock:
            log.write(json.dumps({"from": side, "line": line}) + "\n")
            log.flush()

    child = subprocess.Popen(server_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def client_to_server() -> None:
        try:
            for raw in iter(sys.stdin.buffer.readline, b""):
                record("client", raw)
                child.stdin.write(raw)
                child.stdin.flush()
        except (OSError, ValueError):
            pass
        finally:
            try:
                child.stdin.close()
            except (OSError, ValueError):
                pass

    threading.Thread(target=client_to_server, daemon=True).start()
    out = sys.stdout.buffer
    try:
        for raw in iter(child.stdout.readline, b""):
            record("server", raw)
            out.write(raw)
            out.flush()
    except (OSError, ValueError):
        child.terminate()
    code = child.wait()
    log.close()
    return code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    # Not sys.exit: the stdin thread may still be blocked in a read, and interpreter
    # shutdown would then abort on the buffered stdin's lock.
    os._exit(status)
