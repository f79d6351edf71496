"""HTTP transports. What both ends share lives here (SSE framing, the modern era's headers);
``server`` and ``client`` hold each end."""
