"""Mutation testing of the security-critical modules, on demand (not in CI).

Usage (from the repository root; CPU-heavy, so nice it and take one module at a time):

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python scripts/mutation.py tools/workspace.py
    PYTHONPATH=$PWD nice -n 10 .venv/bin/python scripts/mutation.py --list   # modules and tests

The module's tests are listed in `pyproject.toml` under `[tool.mutation]`.
A first run of them records which test functions execute each line of the module.
Then, for each small change ("mutant") to the module's code, the test functions
that execute its line run against the changed code; the mutant is killed when one
fails (or hangs past the time limit). A mutant on a line no test executes
survives without a run. The score is killed / all; the survivors are printed with
their line, to be pinned by a test or listed as equivalent (a change that cannot
alter behaviour).

The mutations are those of mutmut's kind: comparison and boolean operators
flipped, arithmetic swapped, numbers + 1, strings and bytes altered, True/False
flipped, `not` removed, conditions negated, `break`/`continue` swapped, assigned
and returned values replaced by None, calls made as statements removed.
Docstrings, annotations and type aliases (`Name = Literal[...]`) are left alone.

Speed: the first run happens in this process, so every module is imported once.
Each mutant then runs in a forked child that swaps in the changed code of the
module's functions and methods (their `__code__`) and any changed module-level
value (also in project modules that imported it by name), so the child starts
with everything imported. A change to a module-level value is run against the
tests of the functions that read it.
"""

from __future__ import annotations

import argparse
import ast
import copy
import os
import signal
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_ONE_PROCESS = ("-n", "0", "-p", "no:cacheprovider", "--hypothesis-seed=0")
"""In this process (the tracer sees the lines) and its forks: no pytest-xdist workers,
which the project's `addopts` would otherwise start; and the same Hypothesis examples
in every run, so a mutant is judged by the examples the unchanged code passed."""


@dataclass(frozen=True)
class Mutant:
    index: int
    """The node's position in `ast.walk` order."""
    variant: int
    line: int
    description: str
    lines: tuple[int, int] = (0, 0)
    """The statement around the change (a compound statement's header): a test that
    executes none of these lines cannot notice the mutant."""


Variant = tuple[str, Callable[[ast.AST, ast.AST | None], ast.AST | None]]
"""(description, apply): `apply(node, parent)` returns the replacement node (None: delete)."""

_COMPARE = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINARY = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
}


def _variants(node: ast.AST) -> list[Variant]:
    out: list[Variant] = []
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            new = _COMPARE.get(type(op))
            if new is not None:
                out.append((f"{type(op).__name__} -> {new.__name__}", _set_op(i, new)))
    elif isinstance(node, ast.BoolOp):
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append((f"{type(node.op).__name__} -> {other.__name__}", _set_attr("op", other)))
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BINARY:
        new = _BINARY[type(node.op)]
        out.append((f"{type(node.op).__name__} -> {new.__name__}", _set_attr("op", new)))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        out.append(("not removed", lambda n, _p: n.operand))  # type: ignore[attr-defined]
    elif isinstance(node, ast.Constant):
        out += _constant_variants(node)
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        out.append(("condition negated", _negate))
    elif isinstance(node, ast.Return) and not _is_none(node.value):
        out.append(("return None", lambda n, _p: ast.Return(value=ast.Constant(None))))
    elif isinstance(node, ast.Assign) and not _is_none(node.value):
        out.append(("value -> None", lambda n, _p: ast.Assign(n.targets, ast.Constant(None))))  # type: ignore[attr-defined]
    elif isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
        out.append(("call removed", lambda n, _p: ast.Pass()))
    elif isinstance(node, ast.Break):
        out.append(("break -> continue", lambda n, _p: ast.Continue()))
    elif isinstance(node, ast.Continue):
        out.append(("continue -> break", lambda n, _p: ast.Break()))
    return out


def _constant_variants(node: ast.Constant) -> list[Variant]:
    value = node.value
    if isinstance(value, bool):
        return [(f"{value} -> {not value}", lambda n, _p: ast.Constant(not value))]
    if isinstance(value, (int, float)):
        return [(f"{value!r} -> {value + 1!r}", lambda n, _p: ast.Constant(value + 1))]
    if isinstance(value, str):
        return [(f"{_short(value)} -> 'XX...XX'", lambda n, _p: ast.Constant(f"XX{value}XX"))]
    if isinstance(value, bytes):
        return [(f"{value!r} -> b'XX...XX'", lambda n, _p: ast.Constant(b"XX" + value + b"XX"))]
    return []


def _short(text: str) -> str:
    return repr(text if len(text) <= 30 else text[:29] + "…")


def _is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _set_op(i: int, new: type) -> Callable[[ast.AST, ast.AST | None], ast.AST]:
    def apply(node: ast.AST, _parent: ast.AST | None) -> ast.AST:
        node.ops[i] = new()  # type: ignore[attr-defined]
        return node

    return apply


def _set_attr(name: str, new: type) -> Callable[[ast.AST, ast.AST | None], ast.AST]:
    def apply(node: ast.AST, _parent: ast.AST | None) -> ast.AST:
        setattr(node, name, new())
        return node

    return apply


def _negate(node: ast.AST, _parent: ast.AST | None) -> ast.AST:
    node.test = ast.UnaryOp(ast.Not(), node.test)  # type: ignore[attr-defined]
    return node


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, annotations, `__future__`, TYPE_CHECKING blocks."""
    skip: set[int] = set()

    def all_of(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                all_of(body[0])
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            all_of(node)  # attribute docstrings
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            all_of(node.returns)
            for arg in [
                *node.args.args,
                *node.args.kwonlyargs,
                *node.args.posonlyargs,
                node.args.vararg,
                node.args.kwarg,
            ]:
                if arg is not None:
                    all_of(arg.annotation)
        if isinstance(node, ast.AnnAssign):
            all_of(node.annotation)
        if isinstance(node, ast.ImportFrom):
            all_of(node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            all_of(node)
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            all_of(node)
        if isinstance(node, ast.Assign) and _is_type_alias(node.value):
            all_of(node)
    return skip


_TYPE_FORMS = {"Literal", "Callable", "tuple", "dict", "list", "Union", "Optional", "type"}


def _is_type_alias(value: ast.AST) -> bool:
    """`Name = Literal[...]` and the like: only annotations use them."""
    return (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Name)
        and value.value.id in _TYPE_FORMS
    )


def mutants(source: str) -> list[Mutant]:
    tree = ast.parse(source)
    skip = _skipped(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    found = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip:
            continue
        for variant, (description, _apply) in enumerate(_variants(node)):
            line = getattr(node, "lineno", 0)
            found.append(Mutant(index, variant, line, description, _statement(node, parents)))
    return found


def _statement(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[int, int]:
    while not isinstance(node, ast.stmt) and id(node) in parents:
        node = parents[id(node)]
    start = getattr(node, "lineno", 0)
    end = getattr(node, "end_lineno", start) or start
    body = getattr(node, "body", None)
    if isinstance(body, list) and body:  # a compound statement: its header
        end = max(start, body[0].lineno - 1)
    return start, end


def mutated_source(source: str, mutant: Mutant) -> str:
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    target = nodes[mutant.index]
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    parent = parents.get(id(target))
    _description, apply = _variants(target)[mutant.variant]
    replacement = apply(copy.copy(target), parent)
    _replace(parent, target, replacement)
    return ast.unparse(ast.fix_missing_locations(tree))


def _replace(parent: ast.AST | None, old: ast.AST, new: ast.AST | None) -> None:
    assert parent is not None
    for field, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, field, new)
            return
        if isinstance(value, list):
            for i, item in enumerate(value):
                if item is old:
                    value[i] = new
                    return
    raise LookupError("node not found in its parent")


# -- running ---------------------------------------------------------------------------


def module_name(path: str) -> str:
    name = path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    # widgets/ and tools/ are imported through their links in workbench/
    return f"workbench.{name}" if name.split(".")[0] in ("widgets", "tools") else name


class LineTracer:
    """A pytest plugin: which test functions execute which lines of one file.

    Lines run outside any test (at import, which every test relies on) are
    recorded under "*".
    """

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.lines: dict[int, set[str]] = {}
        self.current: str | None = None

    def _global(self, frame, event, arg):  # type: ignore[no-untyped-def]
        if frame.f_code.co_filename == self.filename:
            return self._local
        return None

    def _local(self, frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "line":
            self.lines.setdefault(frame.f_lineno, set()).add(self.current or "*")
        return self._local

    def start(self) -> None:
        import threading

        sys.settrace(self._global)
        threading.settrace(self._global)

    def stop(self) -> None:
        import threading

        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]

    def pytest_runtest_protocol(self, item, nextitem):  # type: ignore[no-untyped-def]
        self.current = item.nodeid.split("[", 1)[0]  # the function, all its parameters

    def pytest_runtest_logfinish(self, nodeid, location):  # type: ignore[no-untyped-def]
        self.current = None


def trace_lines(tests: list[str], path: Path) -> dict[int, list[str]] | None:
    """Run `tests` once, here (so later forks start with everything imported).

    Returns line -> the test functions that execute it, or None if a test fails.
    """
    import pytest

    tracer = LineTracer(str(path))
    tracer.start()
    try:
        code = pytest.main([*_ONE_PROCESS, "-q", *tests], plugins=[tracer])
    finally:
        tracer.stop()
    if code != 0:
        return None
    return {line: sorted(names) for line, names in tracer.lines.items()} | {-1: ["*"]}


def _quiet() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)


def run_tests(tests: list[str], name: str, source: str, timeout: float, *, patch: bool) -> str:
    """Run `tests` in a forked child with module `name` changed to `source`.

    `patch`: swap the code of the module's functions and methods in place (fast:
    every other module keeps its imports); otherwise the child forgets every
    project module and imports them afresh (for changes to module-level values
    that other modules copy at import). Returns "passed", "failed", "error"
    (pytest could not run them) or "timeout".
    """
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _quiet()
            if not (patch and _patch(name, source)):
                _forget_project()
                _install(name, source)
            import pytest

            code = pytest.main([*_ONE_PROCESS, "-x", "-q", *tests])
            os._exit(min(int(code), 9))  # 1: a test failed; 2-5: pytest could not run them
        except BaseException:  # noqa: BLE001 - a mutant that breaks the import is killed
            os._exit(1)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return {0: "passed", 1: "failed"}.get(code, "error")
        if time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)  # the child and anything its tests started
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.01)


def _patch(name: str, source: str) -> bool:
    """Give module `name` what `source` defines: each function and method its new code,
    each changed module-level value its new value (also where a project module
    imported it by name). False if that cannot be done faithfully (a closure that
    changed shape).
    """
    import types

    module = sys.modules[name]
    fresh: dict[str, object] = {
        "__name__": name,
        "__file__": module.__file__,
        "__package__": module.__package__,
    }
    exec(compile(source, str(module.__file__), "exec"), fresh)  # noqa: S102
    pairs: list[tuple[object, object]] = []
    for key, new in fresh.items():
        old = module.__dict__.get(key)
        if isinstance(new, types.FunctionType):
            pairs.append((old, new))
        elif isinstance(new, type) and isinstance(old, type) and new.__module__ == name:
            pairs += [(vars(old).get(attr), value) for attr, value in vars(new).items()]
        elif not key.startswith("__") and not isinstance(new, (type, types.ModuleType)):
            if not _same(old, new):
                _set_everywhere(key, old, new)
    for old, new in pairs:
        old_fn, new_fn = _function_of(old), _function_of(new)
        if new_fn is None:
            continue
        if old_fn is None or old_fn.__code__.co_freevars != new_fn.__code__.co_freevars:
            return False
        old_fn.__code__ = new_fn.__code__
        old_fn.__defaults__ = new_fn.__defaults__
        old_fn.__kwdefaults__ = new_fn.__kwdefaults__
    return True


def _same(old: object, new: object) -> bool:
    try:
        return type(old) is type(new) and bool(old == new)
    except Exception:  # noqa: BLE001 - a value that cannot be compared is taken as changed
        return False


def _set_everywhere(key: str, old: object, new: object) -> None:
    root = str(ROOT)
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if space is not None and (getattr(module, "__file__", None) or "").startswith(root):
            if space.get(key) is old:
                space[key] = new


def _function_of(value: object) -> object | None:
    import functools
    import types

    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    elif isinstance(value, functools.cached_property):
        value = value.func
    return value if isinstance(value, types.FunctionType) else None


def _forget_project() -> None:
    root = str(ROOT)
    for key, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(root):
            del sys.modules[key]


def _install(name: str, source: str) -> None:
    import importlib.util
    import types

    path = ROOT / (name.replace(".", "/") + ".py")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__package__ = name.rpartition(".")[0]
    module.__spec__ = importlib.util.spec_from_file_location(name, path)
    sys.modules[name] = module
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102


def config() -> dict[str, list[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return data["tool"]["mutation"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", nargs="?", help="e.g. tools/workspace.py")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--only", type=int, nargs="*", help="run only these mutant numbers")
    parser.add_argument("--show", type=int, help="print mutant N's changed code and stop")
    args = parser.parse_args(argv)
    table = config()
    if args.list or args.module is None:
        for module, tests in table.items():
            print(f"{module}: {' '.join(tests)}")
        return 0
    tests = table[args.module]
    source = (ROOT / args.module).read_text(encoding="utf-8")
    found = mutants(source)
    if args.show is not None:
        print(_diff(source, mutated_source(source, found[args.show])))
        return 0
    os.chdir(ROOT)
    started = time.monotonic()
    with _silenced():
        covering = trace_lines(tests, ROOT / args.module)
    if covering is None:
        print("the tests fail without any mutant: fix them first", file=sys.stderr)
        return 2
    baseline = time.monotonic() - started
    timeout = max(10.0, 2 * baseline)
    name = module_name(args.module)
    print(f"{args.module}: {len(found)} mutants, tests take {baseline:.1f}s", flush=True)
    readers = _readers(source)
    survivors = []
    chosen = [(i, m) for i, m in enumerate(found) if args.only is None or i in args.only]
    for i, mutant in chosen:
        start, end = mutant.lines
        lines = readers.get(start) or range(start, end + 1)
        selected = sorted({t for n in lines for t in covering.get(n, [])})
        if "*" in selected:
            selected = tests
        outcome = "passed"
        if selected:
            changed = mutated_source(source, mutant)
            outcome = run_tests(selected, name, changed, timeout, patch=True)
            if outcome == "error":  # a test id pytest could not select: run the whole files
                outcome = run_tests(tests, name, changed, timeout, patch=False)
        if outcome in ("passed", "error"):
            survivors.append((i, mutant))
            why = "" if selected else " (no test runs this line)"
            print(f"  survived #{i} line {mutant.line}: {mutant.description}{why}", flush=True)
    killed = len(chosen) - len(survivors)
    score = 100 * killed / len(chosen) if chosen else 100.0
    print(f"{args.module}: {killed}/{len(chosen)} killed, score {score:.1f}%")
    return 0


def _readers(source: str) -> dict[int, set[int]]:
    """For each module-level assignment (by first line): the lines of the functions
    that read what it assigns, whose tests are the ones that can notice a change to
    it. An assignment no function here reads maps to "*" lines (every test)."""
    tree = ast.parse(source)
    functions = [
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    out: dict[int, set[int]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        lines: set[int] = set()
        for function in functions:
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(function)):
                lines.update(range(function.lineno, (function.end_lineno or 0) + 1))
        out[stmt.lineno] = lines or {-1}
    return out


class _silenced:
    """Send this process's stdout and stderr to /dev/null for a while."""

    def __enter__(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        _quiet()

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)


def _diff(before: str, after: str) -> str:
    import difflib

    old = ast.unparse(ast.parse(before)).splitlines()
    return "\n".join(difflib.unified_diff(old, after.splitlines(), lineterm="", n=1))


if __name__ == "__main__":
    sys.exit(main())
