"""Bringing your own agent: your tools (`--tools`), your project file (`workbench.toml`)."""

from workbench.project.tool_specs import ToolSpecError, load_tools, refuse_duplicates

__all__ = ["ToolSpecError", "load_tools", "refuse_duplicates"]
