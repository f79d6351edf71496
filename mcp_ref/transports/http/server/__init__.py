"""The Streamable HTTP server: the ``http.server`` adapter, the WSGI adapter, and the core both
drive."""
