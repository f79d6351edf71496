"""The server's tasks: the 2025-11-25 task requests, the context a task runs in, and the tasks
extension."""
