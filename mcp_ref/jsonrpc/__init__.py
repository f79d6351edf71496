"""JSON-RPC 2.0: the messages, their encoding and decoding, and the head of a frame that did not
decode."""
