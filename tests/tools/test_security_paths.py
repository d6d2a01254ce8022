"""One canonical path: what rules judge is exactly what the tools open (issue 16).

Each attack runs through the real runtime (scripted model, built-in tools, gate
from flags) and asserts that nothing it aimed at was read or written.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.gate_calls import call_context, run_calls
from workbench.agent import (
    AbortController,
)
from workbench.permissions import PermissionGate
from workbench.tools import builtin_tools
from workbench.tools.workspace import (
    IGNORED_DIRS,
    Workspace,
    WorkspaceError,
    check_path_text,
    is_binary,
    read_sample,
)

SECRET = "SECRET=hunter2"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / ".env").write_text(SECRET + "\n")
    (root / "protected").mkdir()
    (root / "protected" / "keep.txt").write_text("keep\n")
    (root / ".workbench").mkdir()
    (root / ".workbench" / "rules.toml").write_text("")
    (root / ".git" / "hooks").mkdir(parents=True)
    return root


attack = partial(run_calls, approve="rules")
"""A turn of calls with no one to ask: only the rules decide."""


# -- the attacks of issue 16, item 1 -------------------------------------------------

RULES_TAKEOVER = '[[rule]]\ntool = "*"\naction = "allow"\n'


@pytest.mark.parametrize(
    "path",
    [
        "src/a\\b/../../.workbench/rules.toml",
        "src/a\\b/../../.git/hooks/pre-commit",
        "src/../.workbench/rules.toml",
        "src/link/.workbench/rules.toml",  # a symlink inside the workspace back to its root
    ],
)
async def test_a_src_allow_cannot_write_outside_src(ws: Path, path: str) -> None:
    (ws / "src" / "link").symlink_to(ws, target_is_directory=True)
    (result,) = await attack(
        ws,
        [("write_file", {"path": path, "content": RULES_TAKEOVER})],
        allow=['write_file(path="src/**")'],
    )
    assert result.is_error
    assert (ws / ".workbench" / "rules.toml").read_text() == ""
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert sorted(p.name for p in (ws / "src").iterdir()) == ["app.py", "link"]
    # and so the next run still may not run a command on its own
    (ran,) = await attack(ws, [("run_command", {"command": "echo pwned > pwned.txt"})])
    assert ran.is_error and not (ws / "pwned.txt").exists()


@pytest.mark.parametrize(
    "path", [" .env", ".env\n", ".env ", "\t.env", "./.env", "src/../.env", ".env/", "alias"]
)
async def test_a_read_deny_holds_for_every_spelling(ws: Path, path: str) -> None:
    (ws / "alias").symlink_to(ws / ".env")
    (result,) = await attack(ws, [("read_file", {"path": path})], deny=['read_file(path=".env")'])
    assert result.is_error and "hunter2" not in result.text


async def test_a_read_deny_holds_for_the_absolute_path(ws: Path) -> None:
    (result,) = await attack(
        ws, [("read_file", {"path": str(ws / ".env")})], deny=['read_file(path=".env")']
    )
    assert result.is_error and "hunter2" not in result.text
    assert result.text.startswith('Permission denied by rule read_file(path=".env")')


@pytest.mark.parametrize(
    "path", ["protected/keep.txt ", "protected /keep.txt", "protected/keep.txt"]
)
async def test_a_write_deny_holds_with_a_trailing_space(ws: Path, path: str) -> None:
    (result,) = await attack(
        ws,
        [("write_file", {"path": path, "content": "gone"})],
        approve="all",
        deny=['write_file(path="protected/keep.txt")'],
    )
    assert result.is_error
    assert (ws / "protected" / "keep.txt").read_text() == "keep\n"
    assert sorted(p.name for p in (ws / "protected").iterdir()) == ["keep.txt"]
    assert not (ws / "protected ").exists()


# -- refusals, each with its own message ---------------------------------------------

REFUSALS = {
    "../x": "uses '..' to climb outside the workspace",
    "src/../../x": "uses '..' to climb outside the workspace",
    "/etc/passwd": "is an absolute path outside the workspace",
    "~/.ssh/id_rsa": "refers to a home directory",
    "a\x00b": "contains a NUL byte",
    "a\nb": "contains the character U+000A",
    "a\x1b[2Jb": "contains the character U+001B",
    "a\u202eb": "contains the character U+202E",
    "a\u200bb": "contains the character U+200B",
    "a\ud800b": "contains the character U+D800",
    "a\x7fb": "contains the character U+007F",
    "a\u2028b": "contains the character U+2028",
    "a\u2029b": "contains the character U+2029",
    "a\xadb": "contains the character U+00AD",
    "a\\b": "contains a backslash",
    " a": "whitespace at the start or end of a name",
    "a ": "whitespace at the start or end of a name",
    "src/ a": "whitespace at the start or end of a name",
    "src /a": "whitespace at the start or end of a name",
    "\u00a0a": "whitespace at the start or end of a name",
}


@pytest.mark.parametrize("path", sorted(REFUSALS))
def test_refused_paths_say_why(ws: Path, path: str) -> None:
    with pytest.raises(WorkspaceError) as caught:
        Workspace(ws).resolve(path)
    message = str(caught.value)
    assert REFUSALS[path] in message
    assert "symlink" not in message and str(ws) not in message


MESSAGES = {
    "../x": "Path '../x' uses '..' to climb outside the workspace; only files inside the "
    "workspace can be used",
    "/etc/passwd": "Path '/etc/passwd' is an absolute path outside the workspace; only files "
    "inside the workspace can be used",
    "~/x": "Path '~/x' refers to a home directory; paths must be inside the workspace",
    "a\x00b": "Path contains a NUL byte",
    "a\tb": "Path 'a\\tb' contains the character U+0009; paths may not hold control, "
    "invisible or surrogate characters",
    "a\\b": "Path 'a\\\\b' contains a backslash; separate directories with '/'",
    "a /b": "Path 'a /b' has whitespace at the start or end of a name; give the path without it",
}


@pytest.mark.parametrize("path", sorted(MESSAGES))
def test_refusal_messages_in_full(ws: Path, path: str) -> None:
    with pytest.raises(WorkspaceError) as caught:
        Workspace(ws).resolve(path)
    assert str(caught.value) == MESSAGES[path]


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a\x00b", " .env"])
async def test_the_gate_refuses_before_anyone_is_asked(ws: Path, path: str) -> None:
    (result,) = await attack(ws, [("write_file", {"path": path, "content": "x"})], approve="all")
    assert result.is_error and result.text.startswith("Permission denied: Path")


def test_a_symlink_refusal_does_not_say_where_it_points(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "deep"
    outside.mkdir(parents=True)
    (ws / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceError) as caught:
        Workspace(ws).resolve("out/file.txt")
    message = str(caught.value)
    assert message == (
        "Path 'out/file.txt' goes through a symlink that leads outside the workspace; "
        "only files inside the workspace can be used"
    )
    assert "elsewhere" not in message and str(tmp_path) not in message


def test_plain_names_are_accepted() -> None:
    for path in ["", ".", "a b/c d.txt", "src/app.py", "dir/", "üñï/ção.md", "a//b"]:
        check_path_text(path)


def test_canonical_is_the_opened_file_relative_to_the_root(ws: Path) -> None:
    space = Workspace(ws)
    (ws / "alias").symlink_to(ws / ".env")
    assert space.canonical("") == "."
    assert space.canonical("./src//app.py") == "src/app.py"
    assert space.canonical(str(ws / "src" / "app.py")) == "src/app.py"
    assert space.canonical("alias") == ".env"
    assert space.canonical("src/new/file.txt") == "src/new/file.txt"  # need not exist yet


# -- binary or text ------------------------------------------------------------------


def test_the_sniff_is_8_kb(tmp_path: Path) -> None:
    late_nul = tmp_path / "late.txt"
    late_nul.write_bytes(b"a" * 8192 + b"\x00")  # past the sniff: text
    early = tmp_path / "early.bin"
    early.write_bytes(b"a" * 8191 + b"\xff")
    assert not is_binary(read_sample(late_nul)) and is_binary(read_sample(early))
    assert read_sample(late_nul) == b"a" * 8192


def test_workspace_basics(ws: Path, tmp_path: Path) -> None:
    space = Workspace(ws)
    assert repr(space) == f"Workspace({str(ws)!r})"
    (ws / "inner.txt").symlink_to(ws / "src" / "app.py")
    (ws / "outer.txt").symlink_to(tmp_path)
    assert space.real_inside(ws / "inner.txt") is True
    assert space.real_inside(ws / "outer.txt") is False
    assert space.shown(ws / "inner.txt") is True  # nobody said otherwise
    with pytest.raises(NotADirectoryError) as caught:
        Workspace(ws / "src" / "app.py")
    assert str(caught.value) == f"Workspace root {ws / 'src' / 'app.py'} is not a directory"
    (ws / "data.bin").write_bytes(b"a\x00b")
    with pytest.raises(ValueError) as binary:
        space.text_file("data.bin", refusal="no binaries", on_directory="!")
    assert str(binary.value) == "data.bin is a binary file (3 bytes); no binaries"
    with pytest.raises(IsADirectoryError) as directory:
        space.text_file("./src", refusal="", on_directory=", not a file")
    assert str(directory.value) == "src is a directory, not a file"
    fd, shown = space.text_file("src/../src/app.py", refusal="", on_directory="")
    try:
        assert shown == "src/app.py"
        assert os.path.samestat(os.fstat(fd), os.stat(ws / "src" / "app.py"))
    finally:
        os.close(fd)


async def test_listing_skips_every_ignored_directory(ws: Path) -> None:
    ignored = (
        ".git .hg .svn node_modules __pycache__ .venv venv .mypy_cache .pytest_cache "
        ".ruff_cache .tox .idea"
    ).split()  # written out: a test that reads IGNORED_DIRS would follow a change to it
    assert sorted(IGNORED_DIRS) == sorted(ignored)
    for name in ignored:
        (ws / "src" / name).mkdir(exist_ok=True)
    list_directory = next(t for t in builtin_tools(ws) if t.name == "list_directory")
    params = list_directory.parameters.model_validate({"path": "src"})
    result = await list_directory.execute("c", params, AbortController().signal, None)
    assert sorted(result.details["skipped"]) == sorted(ignored)
    assert result.content[0].text == "app.py"


def test_binary_sniffing() -> None:
    assert is_binary(b"abc\x00def")
    assert is_binary(b"caf\xe9 latin-1, no NUL")  # not UTF-8
    assert is_binary(b"\xff\xfe")
    assert is_binary(b"ab\xe2\x41cd")  # a broken sequence in the middle
    assert is_binary(b"plain text\n") is False
    assert is_binary(b"") is False
    cut = ("x" * 8190 + "€").encode()[:8192]  # the sniff ends inside a 3-byte character
    assert len(cut) == 8192 and not is_binary(cut)
    assert not is_binary("€".encode()[:1]) and not is_binary("€".encode()[:2])
    assert is_binary(b"ab\xff")  # an invalid byte at the end is not a cut character


# -- the property: the rule's verdict and the file opened agree ------------------------

SEGMENTS = [
    "src",
    "app.py",
    ".env",
    "secret",
    "k.txt",
    "..",
    ".",
    "",
    "alias",
    "loop",
    "a b",
    " x",
    "x\\y",
    "x\ny",
    "\u200b",
    "~",
]


def denied(relative: str) -> bool:
    """The deny rules below, written out by hand."""
    return relative == ".env" or relative.startswith("secret/")


@pytest.fixture(scope="module")
def maze(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("maze")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("app\n")
    (root / ".env").write_text("env\n")
    (root / "secret").mkdir()
    (root / "secret" / "k.txt").write_text("key\n")
    (root / "alias").symlink_to(root / "secret" / "k.txt")
    (root / "src" / "loop").symlink_to(root, target_is_directory=True)
    return root


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=5),
    st.booleans(),
)
def test_rule_verdict_and_opened_file_agree(maze: Path, parts: list[str], absolute: bool) -> None:
    path = "/".join(parts)
    if absolute:
        path = str(maze) + "/" + path
    gate = PermissionGate.for_workspace(
        maze, policy="all", deny=['read_file(path=".env")', 'read_file(path="secret/**")']
    )
    read_file = next(t for t in builtin_tools(maze) if t.name == "read_file")
    verdict = anyio.run(gate, call_context(read_file, {"path": path}))
    try:
        opened = Path(os.path.realpath(Workspace(maze).resolve(path)))
    except WorkspaceError:
        assert verdict is not None and verdict.block  # refused by the tool: refused by the gate
        return
    relative = opened.relative_to(maze).as_posix()
    if denied(relative):
        assert verdict is not None and verdict.block, f"{path!r} opens {relative}"
    else:
        assert verdict is None, f"{path!r} opens {relative} but was blocked: {verdict}"
