"""Proxy mode: the workbench in front of any agent that talks to an OpenAI-compatible API.

`Proxy` (server) listens, groups requests into conversations and forwards them;
each `Conversation` runs the workbench's own loop on the agent's requests, so its
events, gate, stepper, session and replay are a native run's. `wire` holds the
pure parts shared by every format (message keys, verdicts, the request repair),
`formats` each wire format's reading and rewriting; `workbench.sse` is the one SSE
parser of the product.
"""

from workbench.proxy.conversation import Conversation
from workbench.proxy.server import Proxy, ProxyOptions

__all__ = ["Conversation", "Proxy", "ProxyOptions"]
