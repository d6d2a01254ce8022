"""The wire formats the proxy reads and rewrites, one module each (no I/O here)."""
