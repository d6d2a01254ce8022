"""Your own tools: `--tools SPEC` loads them from a Python file or module.

SPEC is a file (`./agent_tools.py`), a module (`mypkg.tools`), or either with an
attribute (`agent_tools.py:TOOLS`, `mypkg.tools:search`). What counts as a tool:

- an `AgentTool` instance (a `@tool`-decorated function is one);
- a list or tuple of them;
- a plain function whose parameters all have type hints: it is wrapped with `@tool`
  (name from the function, description from its docstring, parameters from its
  signature; sync or async; `signal` and `on_update` are passed when declared).

Without `:attr`, every such object the module defines at top level is loaded, in
the order written, and what it imports is left alone (a public helper function with
type hints counts as a tool: start its name with `_`, or name the tools with `:attr`).

The project directory (the current one) and the file's own directory go on
`sys.path`, so the file's imports of its siblings work. Every failure is a
`ToolSpecError` whose message is for the person who wrote the file: their traceback
(their frames only), or what the spec held instead of tools.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from workbench.agent import AgentTool, tool

_SPECIAL = {"tool_call_id", "signal", "on_update"}


class ToolSpecError(ValueError):
    """A `--tools` spec could not be loaded; the message says why, for its author."""


@dataclass(frozen=True)
class ToolSpec:
    """One `--tools` value, split."""

    text: str
    """As given (recorded in the session, so a re-run loads the same)."""
    target: str
    """The file path or the module name."""
    attr: str | None
    is_file: bool
    flag: str = "--tools"
    """How messages name it (`workbench run` passes its own)."""

    @property
    def named(self) -> str:
        return f"{self.flag} {self.text}".strip()


def parse_spec(text: str, base: Path, flag: str = "--tools") -> ToolSpec:
    """Split `file.py[:attr]` or `module[:attr]`; a path is relative to `base`."""
    target, attr = text, None
    head, sep, tail = text.rpartition(":")
    if sep and tail and tail.replace(".", "_").isidentifier() and len(head) > 1:
        target, attr = head, tail
    looks_like_file = target.endswith(".py") or "/" in target or "\\" in target
    if looks_like_file or (base / target).is_file():
        return ToolSpec(text, target, attr, True, flag)
    if not all(part.isidentifier() for part in target.split(".")):
        raise ToolSpecError(f"{flag} {text}: not a Python file (no such file) nor a module name")
    return ToolSpec(text, target, attr, False, flag)


def load_tools(
    specs: Sequence[str],
    base: Path | None = None,
    not_offered: list[str] | None = None,
    flag: str = "--tools",
) -> list[AgentTool]:
    """The tools of every spec, in order, each with its `source` set ("file x.py:12").

    `not_offered` hears each function of a file loaded whole that is not offered to
    the model, and why (a parameter without a type hint, a type no schema can hold),
    one line each: such a function is left out, never silently. `flag` is how
    messages name where the specs came from (`--tools`, or `workbench.toml tools`).

    Raises:
        ToolSpecError: a spec that does not import, holds no tools, or names a tool
            another spec already named.
    """
    base = (base or Path.cwd()).resolve()
    _import_builtins_first()
    _on_path(base)
    tools: list[AgentTool] = []
    for text in specs:
        tools += load_spec(parse_spec(text, base, flag), base, not_offered)
    refuse_duplicates(tools)
    return tools


def load_spec(spec: ToolSpec, base: Path, not_offered: list[str] | None = None) -> list[AgentTool]:
    module = import_spec(spec, base)
    if spec.attr is not None:
        try:
            value: Any = module
            for part in spec.attr.split("."):
                value = getattr(value, part)
        except AttributeError:
            raise ToolSpecError(
                f"{spec.named}: {spec.target} has no attribute {spec.attr!r}"
            ) from None
        tools = _as_tools(value, spec.attr, spec, module, strict=True)
    else:
        skipped: list[str] = []
        tools = _module_tools(module, spec, skipped)
        if not_offered is not None and tools:  # (no tools at all is an error, below)
            not_offered += skipped
    if not tools:
        raise ToolSpecError(f"{spec.named}: no tools found. {_found(module, spec)}")
    for t in tools:
        if t.source is None:
            t.source = _origin(t, spec, base)
    return tools


def refuse_duplicates(tools: Iterable[AgentTool]) -> None:
    """Raise if two tools share a name, naming where each came from."""
    seen: dict[str, AgentTool] = {}
    for t in tools:
        first = seen.get(t.name)
        if first is not None and first is not t:
            raise ToolSpecError(
                f"tool {t.name!r} is defined twice: {first.source or 'unknown origin'} "
                f"and {t.source or 'unknown origin'} (rename one, or leave one out)"
            )
        seen[t.name] = t


# -- importing -------------------------------------------------------------------------


def _import_builtins_first() -> None:
    # The built-in tools are imported before a project's folder joins the path, so
    # nothing there can stand in for a module they import.
    importlib.import_module("workbench.tools")


def _on_path(directory: Path) -> None:
    entry = str(directory)
    if entry not in sys.path:
        sys.path.insert(0, entry)


def import_spec(spec: ToolSpec, base: Path) -> ModuleType:
    """Import the spec's file or module (its failures become `ToolSpecError`s)."""
    if not spec.is_file:
        if spec.target in sys.modules:
            return sys.modules[spec.target]
        return _run_user_code(spec, lambda: importlib.import_module(spec.target), None)
    path = (base / spec.target).resolve()
    if not path.is_file():
        raise ToolSpecError(f"{spec.named}: no such file {path}")
    _on_path(path.parent)
    # A private module name: the file may be called `tools.py` or `json.py`.
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    name = f"_workbench_tools_{path.stem.replace('-', '_')}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ToolSpecError(f"{spec.named}: cannot load {path} as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module

    def run() -> ModuleType:
        assert module_spec is not None and module_spec.loader is not None
        module_spec.loader.exec_module(module)
        return module

    try:
        return _run_user_code(spec, run, path)
    except ToolSpecError:
        sys.modules.pop(name, None)
        raise


def _run_user_code(spec: ToolSpec, run: Any, path: Path | None) -> ModuleType:
    try:
        return run()
    except ModuleNotFoundError as exc:
        if exc.name == spec.target and path is None:
            raise ToolSpecError(
                f"{spec.named}: no module named {spec.target!r} (and no file {spec.target!r} here)"
            ) from None
        raise ToolSpecError(_user_traceback(spec, exc)) from None
    except Exception as exc:  # noqa: BLE001 - the user's code failed: show them why
        raise ToolSpecError(_user_traceback(spec, exc)) from None
    except SystemExit as exc:
        raise ToolSpecError(f"{spec.named}: the module called exit({exc.code})") from None


def _user_traceback(spec: ToolSpec, exc: BaseException) -> str:
    """The traceback without our frames or importlib's: it starts in the user's code."""
    here = str(Path(__file__).resolve().parent.parent)
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if not f.filename.startswith((here, "<frozen"))]
    )
    body = "".join(te.format()).rstrip()
    return f"{spec.named}: importing it failed\n{body}"


# -- finding tools -----------------------------------------------------------------------


def _module_tools(module: ModuleType, spec: ToolSpec, skipped: list[str]) -> list[AgentTool]:
    tools: list[AgentTool] = []
    seen: set[int] = set()
    for name, value in vars(module).items():
        if name.startswith("_") or not _defined_in(value, module):
            continue
        why = _not_a_tool(value)
        if why is not None:
            skipped.append(f"{spec.named}: {name} ({_where(value, module)}) {why}")
            continue
        try:
            found = _as_tools(value, name, spec, module, strict=False)
        except ToolSpecError as exc:  # a signature no schema can hold: say so, go on
            skipped.append(f"{exc} ({_where(value, module)}); not offered")
            continue
        for t in found:
            if id(t) not in seen:
                seen.add(id(t))
                tools.append(t)
    return tools


def _as_tools(
    value: Any, name: str, spec: ToolSpec, module: ModuleType, *, strict: bool
) -> list[AgentTool]:
    """`value` as tools; with `strict` (a named attribute) anything else is an error."""
    if isinstance(value, AgentTool):
        return [value]
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, AgentTool) or _is_typed_function(v) for v in value):
            return [v if isinstance(v, AgentTool) else _wrap(v, spec) for v in value]
        if strict:
            kinds = sorted({type(v).__name__ for v in value if not isinstance(v, AgentTool)})
            raise ToolSpecError(
                f"{spec.named}: {name} is a {type(value).__name__} that holds "
                f"{', '.join(kinds) or 'nothing'}, not only tools"
            )
        return []
    if _is_typed_function(value):
        return [_wrap(value, spec)]
    if strict:
        if inspect.isfunction(value):
            what = "a function without type hints on every parameter"
        else:
            what = f"a {type(value).__name__}"
        raise ToolSpecError(f"{spec.named}: {name} is {what}, not a tool")
    return []


def _not_a_tool(value: Any) -> str | None:
    """Why a public function of a file loaded whole is not offered (None: it is, or it
    is not a function at all)."""
    if not (inspect.isfunction(value) or inspect.iscoroutinefunction(value)):
        return None
    signature = inspect.signature(value)
    params = [p for p in signature.parameters.values() if p.name not in _SPECIAL]
    untyped = [p.name for p in params if p.annotation is p.empty]
    if untyped:
        return (
            f"is not offered: no type hint on {', '.join(untyped)} "
            "(hint every parameter, or start its name with _ if it is no tool)"
        )
    if not params and signature.return_annotation in (signature.empty, None, "None"):
        return (
            "is not offered: a function of no arguments is a tool only if it says what it "
            "returns (add a return type, or start its name with _)"
        )
    return None


def _where(value: Any, module: ModuleType) -> str:
    code = getattr(inspect.unwrap(value), "__code__", None) if callable(value) else None
    if code is None:
        return module.__name__
    return f"{Path(code.co_filename).name}:{code.co_firstlineno}"


def _wrap(fn: Any, spec: ToolSpec) -> AgentTool:
    try:
        return tool(fn)
    except Exception as exc:  # noqa: BLE001 - a signature pydantic cannot model
        raise ToolSpecError(f"{spec.named}: cannot make a tool of {fn.__name__}: {exc}") from None


def _is_typed_function(value: Any) -> bool:
    if not (inspect.isfunction(value) or inspect.iscoroutinefunction(value)):
        return False
    signature = inspect.signature(value)
    params = [p for p in signature.parameters.values() if p.name not in _SPECIAL]
    if not all(p.annotation is not p.empty for p in params):
        return False
    # A function of no arguments is a tool only if it says what it returns.
    return bool(params) or signature.return_annotation not in (signature.empty, None, "None")


def _defined_in(value: Any, module: ModuleType) -> bool:
    """Whether the module wrote `value` itself (lists count: they are its own objects)."""
    if isinstance(value, (list, tuple)):
        return True
    target = _function_of(value)
    return getattr(target, "__module__", None) == module.__name__


def _function_of(value: Any) -> Any:
    if isinstance(value, AgentTool):
        return getattr(value.execute, "__wrapped__", value.execute)
    return value


def _origin(t: AgentTool, spec: ToolSpec, base: Path) -> str:
    fallback = f"file {spec.target}" if spec.is_file else f"module {spec.target}"
    return origin_of(t, base) or fallback


def origin_of(t: AgentTool, base: Path) -> str | None:
    """`file agent_tools.py:12` (a file of the project, relative to `base`), else
    `module mypkg.tools:12`: where the tool's function is written (None: unknown)."""
    target = _function_of(t)
    fn = inspect.unwrap(target) if callable(target) else None
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    path, line = Path(code.co_filename), code.co_firstlineno
    module = getattr(fn, "__module__", "") or ""
    try:
        return f"file {path.resolve().relative_to(base)}:{line}"
    except ValueError:  # outside the project: an installed module, or a file elsewhere
        if module and not module.startswith("_workbench_tools_") and module != "__main__":
            return f"module {module}:{line}"
        return f"file {path}:{line}"


def _found(module: ModuleType, spec: ToolSpec) -> str:
    """What the module defines instead of tools, for the error message."""
    functions: list[str] = []
    untyped: list[str] = []
    classes: list[str] = []
    other: list[str] = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(value):
            if value.__module__ != module.__name__:
                continue
            (functions if _is_typed_function(value) else untyped).append(name)
        elif inspect.isclass(value):
            if value.__module__ == module.__name__:
                classes.append(name)
        elif not inspect.ismodule(value) and _defined_in(value, module):
            other.append(name)
    parts = []
    if untyped:
        parts.append(f"functions without type hints on every parameter: {', '.join(untyped)}")
    if classes:
        parts.append(f"classes: {', '.join(classes)}")
    if other:
        parts.append(f"other values: {', '.join(other)}")
    found = "; ".join(parts) if parts else "nothing public at top level"
    return (
        f"Found {found}. A tool is an AgentTool (e.g. a @tool function), a list of them, "
        "or a function whose parameters all have type hints."
    )
