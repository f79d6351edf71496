"""The official Python SDK's client (``mcp`` >= 2) driving tasks (revision 2025-11-25)
against a stdio server; prints a JSON report on stdout.

Usage::

    python tests/interop/sdk_tasks_client.py -- SERVER_ARGV...

Written for ``tests/interop/tasks_server.py`` (tools ``add``, ``wait``, ``fail``, ``plain``).

What the SDK offers for tasks, and how this script uses it:

* ``mcp_types`` models the 2025-11-25 task types (``Task``, ``CreateTaskResult``,
  ``GetTaskResult``, ``ListTasksResult``, ``CancelTaskResult``, ``TaskMetadata``,
  ``ServerCapabilities.tasks``, ``Tool.execution``) and the requests ``tasks/get``,
  ``tasks/result``, ``tasks/list``, ``tasks/cancel``; ``ClientSession.send_request``
  sends them and validates the answers into those models.
* The SDK's own client does not drive tasks: ``call_tool`` sends no ``task``, and
  ``send_request`` checks a ``tools/call`` answer against ``CallToolResult`` at
  2025-11-25, which a ``CreateTaskResult`` fails. So the one task-augmented
  ``tools/call`` per task goes through the session's dispatcher
  (``send_raw_request``, a private API of mcp 2.3.0) and its answer is validated as
  ``CreateTaskResult``; everything else uses the public ``send_request``.
* It drops ``notifications/tasks/status`` (not in its 2025-11-25 notification
  tables), so the report cannot show them; the tee log of the test does.

The report: ``{"protocol_version", "capabilities", "tools", "steps": [{"op", "result"
| "error"}...]}``; ``error`` is ``{"type", "code", "message"}``.
"""
import json
import os
import sys
import warnings


async def run(server_argv) -> dict:
    import mcp_types as types

    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    env = {key: value for key, value in os.environ.items() if key in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    params = StdioServerParameters(command=server_argv[0], args=server_argv[1:], env=env, cwd=os.getcwd())
    report = {"steps": []}

    def dump(model):
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def step(op, coro):
        try:
            report["steps"].append({"op": op, "result": dump(await coro)})
        except MCPError as exc:
            report["steps"].append({"op": op, "error": {"type": "MCPError", "code": exc.error.code,
                                                        "message": exc.error.message}})
        except Exception as exc:
            report["steps"].append({"op": op, "error": {"type": type(exc).__name__, "code": None,
                                                        "message": str(exc)}})
        return report["steps"][-1].get("result")

    async with Client(params, mode="legacy", cache=None, read_timeout_seconds=20,
                      client_info=types.Implementation(name="sdk-tasks-client", version="2.0.0")) as client:
        session = client.session
        report["protocol_version"] = client.protocol_version
        report["capabilities"] = dump(client.server_capabilities)
        report["tools"] = [dump(t) for t in (await client.list_tools()).tools]

        async def create(name, arguments, ttl=None):
            task = {} if ttl is None else {"ttl": ttl}
            raw = await session._dispatcher.send_raw_request(
                "tools/call", {"name": name, "arguments": arguments, "task": task}, {"timeout": 20})
            return types.CreateTaskResult.model_validate(raw, by_name=False)

        def get(task_id):
            return session.send_request(types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id)),
                                        types.GetTaskResult)

        def result(task_id):
            return session.send_request(
                types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task_id)),
                types.CallToolResult)

        def cancel(task_id):
            return session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id)),
                types.CancelTaskResult)

        added = await step("create add", create("add", {"a": 2, "b": 3}, ttl=60000))
        add_id = added["task"]["taskId"]
        await step("result add", result(add_id))
        await step("get add", get(add_id))
        failed = await step("create fail", create("fail", {"message": "no luck"}))
        await step("result fail", result(failed["task"]["taskId"]))
        await step("get fail", get(failed["task"]["taskId"]))
        waiting = await step("create wait", create("wait", {}))
        wait_id = waiting["task"]["taskId"]
        await step("cancel wait", cancel(wait_id))
        await step("cancel wait again", cancel(wait_id))
        await step("list", session.send_request(types.ListTasksRequest(), types.ListTasksResult))
        await step("get unknown", get("no-such-task"))
        await step("call wait without task", client.call_tool("wait", {}))
        await step("call add without task", client.call_tool("add", {"a": 1, "b": 1}))
    return report


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] != "--" or len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    try:
        import anyio
        import mcp  # noqa: F401
    except ImportError as exc:
        print(json.dumps({"fatal": f"the official MCP SDK is needed (pip install mcp): {exc}"}))
        return 2
    try:
        report = anyio.run(run, argv[1:])
    except BaseException as exc:
        print(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}))
        return 1
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
