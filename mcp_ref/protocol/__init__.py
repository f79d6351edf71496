"""The protocol's rules above JSON-RPC: revisions and the lifecycle, the modern era's rules,
unguessable ids."""
