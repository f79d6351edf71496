"""The README's example server: a few tools, served over stdio.

Run: ``python -m mcp_ref.examples.demo_server``
"""
import time

from mcp_ref import Context, Server

server = Server("demo", version="1.0", instructions="Small arithmetic tools for trying MCP out.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool(title="Count slowly")
def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress; stops early when the client cancels.

    Args:
        n: how far to count.
    """
    for i in range(1, n + 1):
        ctx.check_cancelled()
        ctx.report_progress(i, total=n, message=f"at {i}")
        time.sleep(0.01)
    return f"counted to {n}"


@server.tool
def divide(a: float, b: float) -> float:
    """Divide a by b (fails on b = 0, to show a tool error)."""
    return a / b


if __name__ == "__main__":
    server.run()
