"""The client's side of the modern era (2026-07-28): discovery, per-request metadata, multi-round-
trip requests."""
