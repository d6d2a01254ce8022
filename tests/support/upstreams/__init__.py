"""Scripted upstreams of each wire format the proxy speaks (one module each), built on
`tests.support.chat_server.ChatServer`: the same scripting, replies and recorded requests."""
