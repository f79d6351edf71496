"""The server's side of the modern era (2026-07-28): serving a modern request, and multi-round-trip
requests."""
