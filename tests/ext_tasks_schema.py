"""JSON Schema of the ``io.modelcontextprotocol/tasks`` extension's messages (2026-07-28).

The extension's definitions are not part of the core ``schema.json`` of 2026-07-28,
so the wire validator (conftest.py) checks its messages against these, written
from the extension's specification (page ``tasks``: ``Task``, ``DetailedTask``,
``CreateTaskResult``, ``GetTaskRequest``, ``UpdateTaskRequest``, ``CancelTaskRequest``,
``TaskStatusNotification``). ``InputRequests`` and ``InputResponses`` refer to the
core schema's definitions of the same name.
"""
STATUS = ["working", "input_required", "completed", "cancelled", "failed"]

TASK = {
    "type": "object",
    "required": ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"],
    "properties": {
        "taskId": {"type": "string"},
        "status": {"enum": STATUS},
        "statusMessage": {"type": "string"},
        "createdAt": {"type": "string", "format": "date-time"},
        "lastUpdatedAt": {"type": "string", "format": "date-time"},
        "ttlMs": {"type": ["integer", "null"], "minimum": 0},
        "pollIntervalMs": {"type": "integer", "minimum": 0},
    },
}

# One shape per status: what the status carries, and nothing of the others.
DETAILED_TASK = {"allOf": [TASK, {"oneOf": [
    {"properties": {"status": {"const": "working"}},
     "not": {"anyOf": [{"required": ["inputRequests"]}, {"required": ["result"]}, {"required": ["error"]}]}},
    {"properties": {"status": {"const": "input_required"}, "inputRequests": {"$ref": "#/$defs/InputRequests"}},
     "required": ["inputRequests"]},
    {"properties": {"status": {"const": "completed"}, "result": {"type": "object"}}, "required": ["result"]},
    {"properties": {"status": {"const": "failed"}, "error": {
        "type": "object", "required": ["code", "message"],
        "properties": {"code": {"type": "integer"}, "message": {"type": "string"}}}}, "required": ["error"]},
    {"properties": {"status": {"const": "cancelled"}},
     "not": {"anyOf": [{"required": ["inputRequests"]}, {"required": ["result"]}, {"required": ["error"]}]}},
]}]}

RESULT_COMPLETE = {"properties": {"resultType": {"const": "complete"}}, "required": ["resultType"]}
TASK_ID_PARAMS = {"type": "object", "required": ["taskId"], "properties": {"taskId": {"type": "string"}}}


def _request(method: str, params: dict) -> dict:
    return {"type": "object", "required": ["method", "params"],
            "properties": {"method": {"const": method}, "params": params}}


DEFINITIONS = {
    "CreateTaskResult": {"allOf": [TASK, {"properties": {"resultType": {"const": "task"}},
                                          "required": ["resultType"],
                                          "not": {"anyOf": [{"required": ["result"]}, {"required": ["error"]}]}}]},
    "GetTaskResult": {"allOf": [DETAILED_TASK, RESULT_COMPLETE]},
    "UpdateTaskResult": RESULT_COMPLETE,
    "CancelTaskResult": RESULT_COMPLETE,
    "GetTaskRequest": _request("tasks/get", TASK_ID_PARAMS),
    "CancelTaskRequest": _request("tasks/cancel", TASK_ID_PARAMS),
    "UpdateTaskRequest": _request("tasks/update", {
        "allOf": [TASK_ID_PARAMS, {"required": ["inputResponses"],
                                   "properties": {"inputResponses": {"$ref": "#/$defs/InputResponses"}}}]}),
    "TaskStatusNotification": {"type": "object", "required": ["method", "params"],
                               "properties": {"method": {"const": "notifications/tasks"},
                                              "params": DETAILED_TASK}},
}

# method -> (the request's or notification's definition, its result's definition)
METHODS = {
    "tasks/get": ("GetTaskRequest", "GetTaskResult"),
    "tasks/update": ("UpdateTaskRequest", "UpdateTaskResult"),
    "tasks/cancel": ("CancelTaskRequest", "CancelTaskResult"),
    "notifications/tasks": ("TaskStatusNotification", None),
}
