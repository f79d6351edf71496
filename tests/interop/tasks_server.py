"""An ``mcp_ref`` server whose tools run as tasks (revision 2025-11-25), served over stdio.

Run: ``python tests/interop/tasks_server.py``. Used by ``tests/test_interop_tasks.py``
(the official SDK's client against it) and by ``tests/test_tasks.py`` (``Client.stdio``).

Tools
    ``add(a, b) -> int``      ``task_support="optional"``: as a task or as a plain call
    ``wait(ctx) -> str``      ``task_support="required"``: reports progress 1, then waits
                              until its task is cancelled (30 s at most) and returns
                              ``"cancelled"`` or ``"finished"``
    ``fail(message) -> str``  ``task_support="optional"``: raises ``ValueError(message)``
                              (an ``isError`` result; as a task, status ``failed``)
    ``plain() -> str``        no task support: ``"plain"``
"""
from mcp_ref import Context, Server

server = Server("tasks-interop", version="1.0.0")


@server.tool(task_support="optional")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(task_support="required")
def wait(ctx: Context) -> str:
    """Wait until cancelled (at most 30 s)."""
    ctx.report_progress(1)
    return "cancelled" if ctx.cancelled.wait(30) else "finished"


@server.tool(task_support="optional")
def fail(message: str = "boom") -> str:
    """Raise ValueError(message)."""
    raise ValueError(message)


@server.tool
def plain() -> str:
    """No task support."""
    return "plain"


if __name__ == "__main__":
    server.run()
