"""What keeps an MCP server within bounds, beyond what the SDK does.

- Its processes: a stdio server is started as a `ProcessTree` (the SDK ends only
  its process group, and only when it stops it); `end_tree_when_server_exits`
  watches the server and ends whatever it leaves behind once it exits by itself.
- Its schemas' regexes: the SDK checks `structuredContent` against a tool's
  `outputSchema` with `jsonschema`'s unbounded matching; `bound_output_schemas`
  gives it validators whose regex keywords are time-bounded.
"""

from __future__ import annotations

from typing import Any

import anyio

from workbench.proctree import ProcessTree

SERVER_TREE_GRACE = 2.0
"""Seconds a stdio server's leftover processes get after SIGTERM before SIGKILL."""
SERVER_WATCH_INTERVAL = 0.5
"""Seconds between looks at whether a stdio server is still alive."""


async def end_tree_when_server_exits(tree: ProcessTree) -> None:
    """Keep track of the server's descendants; once the server itself has exited,
    end whatever it left behind (its session then ends as its pipes close)."""
    for _ in range(20):
        if tree.adopt_child():
            break
        await anyio.sleep(SERVER_WATCH_INTERVAL / 10)
    while tree.root_running():
        tree.watch()
        await anyio.sleep(SERVER_WATCH_INTERVAL)
    await tree.end(SERVER_TREE_GRACE)


def bound_output_schemas(session: Any, tools: list[Any]) -> None:
    """Give the SDK time-bounded validators for the tools' output schemas.

    The SDK checks a result's `structuredContent` against the tool's `outputSchema`
    with `jsonschema`, whose `pattern` matching has no time bound: a hostile server
    could freeze the event loop with its own schema. The SDK keeps the compiled
    validators in a cache (by tool name) that it fills only when empty; filling it
    first with `schema_patterns` validators bounds that matching too.
    """
    cache = getattr(session, "_tool_output_validators", None)
    if not isinstance(cache, dict):
        return
    from jsonschema import SchemaError  # type: ignore[import-untyped]
    from jsonschema.validators import validator_for  # type: ignore[import-untyped]
    from referencing import Registry

    from workbench.agent.schema_patterns import with_safe_patterns

    for tool in tools:
        schema = tool.output_schema
        if not isinstance(schema, dict):
            continue
        cls = validator_for(schema)
        try:
            cls.check_schema(schema)
        except SchemaError:
            continue  # the SDK reports an invalid schema itself, at the call
        cache[tool.name] = with_safe_patterns(cls)(schema, registry=Registry())
