"""Agent Workbench: watch, step through and steer an LLM agent's tool calls."""

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `workbench.run_app` / `run_headless` / `attach`, imported on first use, so that
    # `import workbench` stays cheap and Textual-free.
    if name in ("run_app", "run_headless", "attach"):
        from workbench import embed

        return getattr(embed, name)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
