"""Python functions read into JSON Schema, arguments bound to them, values checked against schemas,
URI templates."""
