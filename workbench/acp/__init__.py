"""ACP (Agent Client Protocol) agents in the workbench: `workbench acp -- AGENT ...`.

The agent runs as a subprocess speaking JSON-RPC over its stdio; the workbench is
its client. `AcpRun` puts the agent's session under the workbench's own loop, so
its messages and tool calls reach the timeline, the inspector, the gate, the
stepper and the session recorder as any run's do (see docs/acp.md).
"""

from workbench.acp.run import AcpError, AcpOptions, AcpRun

__all__ = ["AcpError", "AcpOptions", "AcpRun"]
