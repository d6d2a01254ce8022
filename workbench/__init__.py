"""Agent Workbench: watch, step through and steer an LLM agent's tool calls."""

__version__ = "0.1.0"
