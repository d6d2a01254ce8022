"""The tools of a small to-do agent: the example of debugging your own agent.

Each tool shows one shape the workbench handles (see the README's "Debug your own
agent"):

- `list_tasks`: a plain function with type hints (no decorator), sync;
- `add_task`: `@tool` with `prepare_arguments`, which mends the arguments models
  often get wrong before they are validated;
- `complete_task`: a sequential tool (a batch that contains it runs one call at a
  time) that answers an unknown id with an `is_error` result instead of raising;
- `summarize`: a structured result checked against its `output_schema`;
- `run_checks`: async, streams its progress through `on_update`, and stops when
  the run is cancelled (`signal`).

The tasks live in `tasks.json` in the current directory (created on first use).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import date
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from workbench.agent import AbortSignal, AgentToolResult, TextContent, tool

TASKS = Path("tasks.json")
STARTING_TASKS = [
    {"id": 1, "title": "Fix the login bug", "due": "2026-12-02", "done": False},
    {"id": 2, "title": "Review the API docs", "due": None, "done": False},
    {"id": 3, "title": "Book the team lunch", "due": "2026-11-28", "done": True},
]


def _load() -> list[dict[str, Any]]:
    if not TASKS.exists():
        _save(STARTING_TASKS)
    return json.loads(TASKS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _save(tasks: list[dict[str, Any]]) -> None:
    # Parallel calls read while another writes: replace the file whole, never truncate it.
    fresh = TASKS.with_name(f".{TASKS.name}.{os.getpid()}.{threading.get_ident()}")
    fresh.write_text(json.dumps(tasks, indent=2) + "\n", encoding="utf-8")
    os.replace(fresh, TASKS)


def list_tasks(status: Literal["open", "done", "all"] = "open") -> list[dict[str, Any]]:
    """List the to-do tasks.

    Args:
        status: which tasks: open (the default), done, or all.
    """
    tasks = _load()
    if status == "all":
        return tasks
    return [t for t in tasks if t["done"] == (status == "done")]


def _mend_task(args: dict[str, Any]) -> dict[str, Any]:
    """Models often say `name` or `task` for the title, and "tomorrow" for a date."""
    args = dict(args)
    for alias in ("name", "task", "text"):
        if "title" not in args and alias in args:
            args["title"] = args.pop(alias)
    return args


@tool(prepare_arguments=_mend_task)
def add_task(title: str, due: date | None = None) -> str:
    """Add a task to the list.

    Args:
        title: what to do, in a few words.
        due: the day it is due (YYYY-MM-DD), if any.
    """
    tasks = _load()
    task = {
        "id": max((t["id"] for t in tasks), default=0) + 1,
        "title": title,
        "due": due.isoformat() if due else None,
        "done": False,
    }
    _save([*tasks, task])
    return f"added task {task['id']}: {title}"


@tool(execution_mode="sequential")
def complete_task(id: int) -> AgentToolResult:  # noqa: A002 - the name the model sees
    """Mark a task as done.

    Args:
        id: the task's id (see list_tasks).
    """
    tasks = _load()
    for task in tasks:
        if task["id"] == id:
            task["done"] = True
            _save(tasks)
            return AgentToolResult.text(f"task {id} is done: {task['title']}")
    known = [t["id"] for t in tasks]
    return AgentToolResult(
        content=[TextContent(text=f"There is no task {id}. Known ids: {known}")],
        details={"known_ids": known},
        is_error=True,
    )


class Summary(BaseModel):
    open: int
    done: int
    overdue: list[str]


@tool(output_schema=Summary)
def summarize(today: date) -> dict[str, Any]:
    """Count open and done tasks, and name the overdue ones.

    Args:
        today: today's date (YYYY-MM-DD).
    """
    tasks = _load()
    overdue = [
        t["title"]
        for t in tasks
        if not t["done"] and t["due"] and date.fromisoformat(t["due"]) < today
    ]
    return {
        "open": sum(not t["done"] for t in tasks),
        "done": sum(t["done"] for t in tasks),
        "overdue": overdue,
    }


@tool
async def run_checks(signal: AbortSignal, on_update: Any) -> str:
    """Check the list for problems (duplicate titles, missing dates), reporting progress."""
    tasks = _load()
    problems: list[str] = []
    seen: set[str] = set()
    for i, task in enumerate(tasks, 1):
        if signal.aborted:
            return f"stopped after {i - 1} of {len(tasks)} tasks"
        on_update(f"checked {i}/{len(tasks)}: {task['title']}")
        if task["title"].lower() in seen:
            problems.append(f"duplicate: {task['title']}")
        seen.add(task["title"].lower())
        if not task["done"] and not task["due"]:
            problems.append(f"no due date: {task['title']}")
        await anyio.sleep(0.05)
    return "\n".join(problems) or "no problems"
