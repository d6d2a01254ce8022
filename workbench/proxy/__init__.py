"""Proxy mode: the workbench in front of any agent that talks to an OpenAI-compatible API.

`Proxy` (server) listens, groups requests into conversations and forwards them;
each `Conversation` runs the workbench's own loop on the agent's requests, so its
events, gate, stepper, session and replay are a native run's. `wire` holds the
pure parts: message keys, SSE events, and the response and request rewrites.
"""

from workbench.proxy.conversation import Conversation
from workbench.proxy.server import Proxy, ProxyOptions

__all__ = ["Conversation", "Proxy", "ProxyOptions"]
