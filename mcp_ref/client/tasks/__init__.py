"""The client's tasks: the 2025-11-25 task requests and the tasks extension."""
