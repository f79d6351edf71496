"""The HTTP clients: Streamable HTTP, and the 2024-11-05 HTTP+SSE transport."""
