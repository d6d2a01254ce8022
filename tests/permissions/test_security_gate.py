"""The gate against a hostile model: protected paths, read denies, suggestions (issue 16)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.gate_calls import builtin_tool, call_context, run_calls
from workbench.agent import (
    AbortController,
    AgentContext,
    AgentTool,
    AssistantMessage,
    BeforeToolCallContext,
    ToolCall,
)
from workbench.permissions import (
    CallPattern,
    PatternError,
    PermissionAnswer,
    PermissionGate,
    suggest_pattern,
)
from workbench.permissions.protected import names_protected, protected_target, protection_warning


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\nTOKEN in app\n")
    (tmp_path / ".env").write_text("TOKEN=hunter2\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("TOKEN key\n")
    (tmp_path / ".workbench").mkdir()
    (tmp_path / ".workbench" / "rules.toml").write_text("")
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    return tmp_path


run_turn = partial(run_calls, approve="all")
"""A turn of calls with every ask answered yes: what is refused, the gate refused."""


# -- protected paths -----------------------------------------------------------------

TAKEOVER = '[[rule]]\ntool = "*"\naction = "allow"\n'


@pytest.mark.parametrize(
    "allow", [["write_file"], ['write_file(path="**")'], ["*"], ['write_file(path=".*/**")']]
)
@pytest.mark.parametrize("target", [".workbench/rules.toml", ".git/hooks/pre-commit", ".GIT/x"])
async def test_broad_allows_never_write_protected_paths(
    ws: Path, allow: list[str], target: str
) -> None:
    (result,) = await run_turn(
        ws, [("write_file", {"path": target, "content": TAKEOVER})], allow=allow
    )
    assert result.is_error and "protected path" in result.text
    assert (ws / ".workbench" / "rules.toml").read_text() == ""
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == []


async def test_edit_file_cannot_change_the_rules_either(ws: Path) -> None:
    (ws / ".workbench" / "rules.toml").write_text("# rules\n")
    (result,) = await run_turn(
        ws,
        [
            (
                "edit_file",
                {"path": ".workbench/rules.toml", "old_text": "# rules", "new_text": TAKEOVER},
            )
        ],
    )
    assert result.is_error and (ws / ".workbench" / "rules.toml").read_text() == "# rules\n"


async def test_a_rule_naming_the_directory_allows_it(ws: Path) -> None:
    (result,) = await run_turn(
        ws,
        [("write_file", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"})],
        approve="none",
        allow=['write_file(path=".git/hooks/**")'],
    )
    assert not result.is_error and (ws / ".git" / "hooks" / "pre-commit").exists()


async def test_a_person_is_asked_with_a_warning_and_an_exact_suggestion(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws, allow=["write_file"])
    ctx = call_context(
        builtin_tool(ws, "write_file"), {"path": "./.git/hooks/post-merge", "content": "x"}
    )
    out: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: _collect(out, gate(ctx, AbortController().signal)))
        while not gate.pending:
            await anyio.sleep(0.001)
        (request,) = gate.pending
        assert request.rule is None  # the broad allow did not decide; nobody pretends it asked
        assert request.protected == (
            "Protected path: this call changes .git/hooks/post-merge, which holds git's "
            "internals (hooks there run on your next commit)."
        )
        assert request.suggested_pattern == 'write_file(path=".git/hooks/post-merge")'
        gate.decide(request.request_id, PermissionAnswer.always_tool())
    assert out == [None]  # the person allowed this very call
    # ... but "always write_file" still does not cover the next protected call
    assert (await _decide_no_wait(gate, ws, ".workbench/x")) == "asks"
    assert (await _decide_no_wait(gate, ws, "src/x")) == "allowed"


async def _collect(out: list[Any], awaitable: Any) -> None:
    out.append(await awaitable)


async def _decide_no_wait(gate: PermissionGate, ws: Path, path: str) -> str:
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": path, "content": "x"})
    with anyio.move_on_after(0.2):
        result = await gate(ctx, AbortController().signal)
        return "allowed" if result is None else "denied"
    return "asks"


async def test_the_rules_file_is_protected_wherever_it_lies(ws: Path) -> None:
    (ws / "perms.toml").write_text("")
    (result,) = await run_turn(
        ws,
        [("write_file", {"path": "perms.toml", "content": TAKEOVER})],
        allow=["write_file"],
        rules_file=ws / "perms.toml",
    )
    assert result.is_error and "protected path" in result.text
    assert (ws / "perms.toml").read_text() == ""
    gate = PermissionGate.for_workspace(ws, rules_file=ws / "perms.toml")
    assert gate.protected_files == ("perms.toml",)
    warning = protection_warning("edit_file", {"path": "perms.toml"}, gate.protected_files)
    assert warning == (
        "Protected path: this call changes perms.toml, which holds this run's own files "
        "(its permission rules, MCP config or sessions)."
    )
    assert PermissionGate.for_workspace(ws, rules_file=ws.parent / "x.toml").protected_files == ()


async def test_a_symlink_into_git_is_protected_too(ws: Path) -> None:
    (ws / "hooks").symlink_to(ws / ".git" / "hooks", target_is_directory=True)
    (result,) = await run_turn(
        ws, [("write_file", {"path": "hooks/pre-commit", "content": "x"})], allow=["write_file"]
    )
    assert result.is_error and ".git/hooks/pre-commit, a protected path" in result.text
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


def test_protection_is_pure_and_spares_reading_tools() -> None:
    assert protected_target("read_file", {"path": ".git/config"}) is None
    assert protected_target("search_files", {"path": ".workbench"}) is None
    assert protected_target("list_directory", {"path": ".git"}) is None
    assert protection_warning("edit_file", {"path": ".workbench/r"}) == (
        "Protected path: this call changes .workbench/r, which holds the workbench's own rules "
        "and settings."
    )
    assert protected_target("write_file", {"path": ".git"}) == ".git"
    assert protected_target("srv__put", {"file_path": ".workbench/c.toml"}) == ".workbench/c.toml"
    assert protected_target("write_file", {"path": ".gitignore"}) is None
    assert protected_target("write_file", {"path": "src/.git/x"}) == "src/.git/x"
    assert protected_target("write_file", {"path": 3, "content": ".git/x"}) is None
    assert protection_warning("write_file", {"path": "src/a"}) is None
    assert "workbench's own rules" in (
        protection_warning("edit_file", {"path": ".workbench/r"}) or ""
    )
    assert names_protected(CallPattern.parse('write_file(path=".git/**")'), ".git/x")
    assert not names_protected(CallPattern.parse('write_file(path=".workbench/**")'), ".git/x")
    assert not names_protected(CallPattern.parse('write_file(path="**")'), ".git/x")
    assert not names_protected(CallPattern.parse('write_file(content=".git/**")'), ".git/x")
    assert not names_protected(CallPattern.parse("write_file"), ".git/x")
    assert not names_protected(CallPattern.parse('write_file(path=".git*/**")'), ".git/x")
    assert names_protected(CallPattern.parse('write_file(path=".git")'), ".git")
    assert names_protected(CallPattern.parse('w(path="r.toml")'), "r.toml", ["r.toml"])
    assert not names_protected(CallPattern.parse('w(path="r.toml")'), "r.toml")
    assert protected_target("write_file", {"path": "r.toml"}, ["r.toml"]) == "r.toml"
    assert protected_target("write_file", {"path": "r.toml"}) is None


# -- a read denied is denied to every reading tool -----------------------------------

DENY_READS = ['read_file(path=".env")', 'read_file(path="secrets/**")']


async def test_search_and_listing_hide_what_read_file_may_not_read(ws: Path) -> None:
    (ws / "alias.txt").symlink_to(ws / "secrets" / "key.txt")
    search, listing, one, listed_secrets = await run_turn(
        ws,
        [
            ("search_files", {"pattern": "TOKEN"}),
            ("list_directory", {"path": ".", "depth": 3}),
            ("search_files", {"pattern": "TOKEN", "path": ".env"}),
            ("list_directory", {"path": "secrets"}),
        ],
        deny=DENY_READS,
    )
    assert search.text == "src/app.py:2: TOKEN in app"
    assert search.details["files_hidden"] == 3  # .env, secrets/key.txt, alias.txt
    assert (
        ".env" not in listing.text and "key.txt" not in listing.text and "alias" not in listing.text
    )
    assert "src/app.py" in listing.text and "secrets/" in listing.text
    assert listing.details["hidden"] == 3
    assert one.is_error and one.text == "File not found: .env"  # as if it did not exist
    assert listed_secrets.text == "[empty directory]"


async def test_an_ask_on_read_hides_too_unless_everything_is_approved(ws: Path) -> None:
    (search,) = await run_turn(
        ws,
        [("search_files", {"pattern": "hunter2"})],
        approve="none",
        ask=['read_file(path=".env")'],
    )
    assert search.text == "No matches for 'hunter2' in 3 files."
    (search,) = await run_turn(
        ws,
        [("search_files", {"pattern": "hunter2"})],
        approve="all",
        ask=['read_file(path=".env")'],
    )
    assert search.text == ".env:1: TOKEN=hunter2"


@pytest.mark.parametrize(
    "edit",
    [
        {"old_text": "TOKEN=hunter2", "new_text": "x"},  # success would show the diff
        {"old_text": "TOKEN=h", "new_text": "x"},  # "not found" vs "found" is an oracle
    ],
)
async def test_edit_file_cannot_reveal_a_read_denied_file(ws: Path, edit: dict[str, str]) -> None:
    (result,) = await run_turn(ws, [("edit_file", {"path": ".env", **edit})], deny=DENY_READS)
    assert result.is_error
    assert result.text == 'Permission denied by rule read_file(path=".env") (--deny)'
    assert (ws / ".env").read_text() == "TOKEN=hunter2\n"


async def test_edit_file_asks_when_reading_would_ask(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws, allow=["edit_file"], ask=['read_file(path=".env")'])
    rule, action, _ = gate.judge("edit_file", {"path": ".env"})
    assert action == "ask" and rule is not None and rule.text == 'read_file(path=".env")'
    rule, action, _ = gate.judge("edit_file", {"path": "src/app.py"})
    assert action == "allow" and rule is not None and rule.text == "edit_file"


def test_other_tools_paths_are_judged_as_written(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws)
    mcp = AgentTool("srv__put", "Put", "", {"type": "object"}, execute=None, source="mcp:srv")  # type: ignore[arg-type]
    judged = gate.judged_args(
        mcp, {"path": "/etc/passwd", "file_path": str(ws / "a" / ".." / "b"), "n": 1, "p2": " x"}
    )
    assert judged == {"path": "/etc/passwd", "file_path": "b", "n": 1, "p2": " x"}
    builtin = builtin_tool(ws, "read_file")
    assert gate.judged_args(builtin, {"path": "./src//app.py", "offset": 2}) == {
        "path": "src/app.py",
        "offset": 2,
    }
    assert PermissionGate().judged_args(builtin, {"path": " x"}) == {"path": " x"}  # no workspace


def test_may_read_follows_rules_and_policy(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws, deny=DENY_READS, ask=['read_file(path="src/*.md")'])
    assert gate.may_read("src/app.py") and not gate.may_read(".env")
    assert not gate.may_read("secrets/key.txt") and not gate.may_read("src/a.md")
    gate.policy = "all"
    assert gate.may_read("src/a.md") and not gate.may_read(".env")
    empty = PermissionGate(policy="ask")
    empty.rules.rules.clear()
    assert not empty.may_read("x")  # no rule at all means "ask"


# -- pattern suggestions: never broader than the call --------------------------------

SUGGESTIONS = {
    "pytest -q tests": "pytest -q tests",
    "pytest": "pytest",
    "git status": "git status",
    "git commit -m wip": "git commit *",
    "npm run build --silent": "npm run *",
    "python app.py --fast": "python app.py *",
    "python -c 'import os'": "python -c 'import os'",
    "python3 -m http.server 80": "python3 -m http.server 80",
    "rm -rf build dist": "rm -rf build dist",
    "rm build dist": "rm build dist",
    "sudo apt install x": "sudo apt install x",
    "/usr/bin/sudo apt install x": "/usr/bin/sudo apt install x",
    "bash run.sh --x": "bash run.sh --x",
    "sh -c 'ls' x": "sh -c 'ls' x",
    "xargs rm -rf x": "xargs rm -rf x",
    "find . -delete": "find . -delete",
    "FOO=1 rm -rf x": "FOO=1 rm -rf x",
    "ls; rm -rf ~": "ls; rm -rf ~",
    "l$s a b": "l$s a b",
    "pyt*st a b": "pyt[*]st a b",
    "a?b c d": "a[?]b c d",
    "[x] y z": "[[]x] y z",
    "git log | sh": "git log | sh",
    "git log $(x) y": "git log $(x) y",
    "git 'log' x": "git 'log' x",
    "  git commit -m x": "git commit *",  # blanks around a literal command change nothing
    "X=1 make all": "X=1 make all",
}


@pytest.mark.parametrize("command", sorted(SUGGESTIONS))
def test_command_suggestions(command: str) -> None:
    pattern = suggest_pattern("run_command", {"command": command})
    assert pattern.args == (("command", SUGGESTIONS[command]),)
    assert pattern.matches("run_command", {"command": command})


def test_escaped_suggestions_match_the_call_and_not_a_variant() -> None:
    pattern = suggest_pattern("run_command", {"command": "pyt*st -k a?b [x]"})
    assert str(pattern) == 'run_command(command="pyt[*]st -k a[?]b [[]x]")'
    assert pattern.matches("run_command", {"command": "pyt*st -k a?b [x]"})
    for variant in [
        "pytest -k a?b [x]",
        "pyt*st -k aXb [x]",
        "pyt*st -k a?b x",
        "pyt*st -k a?b [y]",
    ]:
        assert not pattern.matches("run_command", {"command": variant})


def test_cmd_is_a_command_too() -> None:
    pattern = suggest_pattern("srv__exec", {"cmd": "git commit -m x"})
    assert str(pattern) == 'srv__exec(cmd="git commit *")'
    broad = CallPattern.parse('srv__exec(cmd="pytest **")')
    assert broad.matches("srv__exec", {"cmd": "pytest -q"})
    assert not broad.matches("srv__exec", {"cmd": "pytest; rm -rf ~"})
    assert not broad.matches("srv__exec", {"cmd": "pytest -q; rm -rf ~"})


@pytest.mark.parametrize(
    "command",
    [
        "pytest; rm -rf ~",
        "pytest | sh",
        "pytest $(x)",
        "pytest `x`",
        "pytest && rm x",
        "pytest > ~/.bashrc",
        "pytest < /etc/passwd",
        "pytest\nrm -rf ~",
        "pytest & rm x",
        "pytest -q; rm -rf ~",
        "pytest -q | sh",
        "pytest -q $(rm -rf ~)",
        "pytest -q `id`",
        "pytest -q\nrm -rf ~",
        "pytest -q >> ~/.bashrc",
    ],
)
def test_a_double_star_command_glob_stays_one_command(command: str) -> None:
    for name in ("command", "cmd"):
        for glob in ("pytest **", "pytest *", "pytest -q **"):
            pattern = CallPattern.parse(f'run_command({name}="{glob}")')
            assert not pattern.matches("run_command", {name: command})
        assert CallPattern.parse(f'run_command({name}="pytest **")').matches(
            "run_command", {name: "pytest -q tests/ -k 'a or b' \\$HOME"}
        )


def test_suggestions_for_paths_and_other_tools() -> None:
    assert (
        str(suggest_pattern("write_file", {"path": "src/app/x.py"}))
        == 'write_file(path="src/app/**")'
    )
    assert str(suggest_pattern("write_file", {"path": "x.py"})) == 'write_file(path="x.py")'
    assert str(suggest_pattern("write_file", {"path": "../x.py"})) == 'write_file(path="../x.py")'
    assert str(suggest_pattern("write_file", {"path": " "})) == "write_file"
    assert str(suggest_pattern("run_command", {"command": "  "})) == "run_command"
    assert str(suggest_pattern("other", {"value": 1})) == "other"


def test_pattern_basics_the_gate_relies_on() -> None:
    assert CallPattern.parse("mcp:files").tool == "files__*"
    assert CallPattern.parse("mcp:f*").tool == "f*__*"
    assert CallPattern.of("mcp:files", {"path": "a"}).tool == "files__*"
    assert CallPattern.parse("mcp:files/x").tool == "mcp:files/x"  # not a server name
    assert CallPattern.parse("a").matches("b", {}) is False
    assert CallPattern.parse('a(x="1")').matches("a", {"x": "2"}) is False
    assert CallPattern.parse('a(x="1")').matches("a", {"x": "1"}) is True
    assert CallPattern.parse('a(x="1")').matches("a", {}) is False
    assert CallPattern.parse('a(x="*")').matches("a", {"x": None}) is False
    assert CallPattern("XX_tool").specificity == (0, 1, 0)
    assert [
        CallPattern(t).specificity[1] for t in ("read_file", "read_*", "read?", "[r]ead", "[rs]ead")
    ] == [1, 0, 0, 1, 0]  # `[r]` is how a literal name escapes a glob character
    pattern = CallPattern.parse('a(x="1")')
    assert {pattern, CallPattern.parse('a(x="1")')} == {pattern}  # hashable, by value
    with pytest.raises(AttributeError):
        pattern.tool = "b"  # type: ignore[misc]


RUNS_ANYTHING = (
    "rm sudo su doas sh bash zsh fish dash ksh csh tcsh env xargs exec eval command builtin "
    "nohup nice timeout time watch ssh find"
).split()


@pytest.mark.parametrize("program", RUNS_ANYTHING)
def test_programs_that_run_or_delete_are_only_suggested_exactly(program: str) -> None:
    command = f"{program} target more args"
    assert suggest_pattern("run_command", {"command": command}).args == (("command", command),)
    assert suggest_pattern("run_command", {"command": f"/usr/bin/{program} a b"}).args == (
        ("command", f"/usr/bin/{program} a b"),
    )


GLOBS = [
    ("f[ab]o", "fao", True),
    ("f[ab]o", "fbo", True),
    ("f[ab]o", "fco", False),
    ("f[ab]o", "fXo", False),
    ("f[!a]o", "fbo", True),
    ("f[!a]o", "fao", False),
    ("f[]]o", "f]o", True),
    ("f[]]o", "fao", False),
    ("f[!]o", "f[!]o", True),
    ("f[!]o", "fao", False),
    ("x[^a]", "x^", True),
    ("x[^a]", "xa", True),
    ("x[^a]", "xb", False),
    ("[&~|]", "&", True),
    ("[&~|]", "|", True),
    ("[XY]", "X", True),
    ("[a-c]", "b", True),
    ("[a-c]", "-", False),
    ("x**y", "x123y", True),
    ("x**y", "x123z", False),
    ("x[", "x[", True),
    ("[\\]", "\\", True),
]


@pytest.mark.parametrize(("glob", "value", "ok"), GLOBS)
def test_character_classes(glob: str, value: str, ok: bool) -> None:
    assert CallPattern.of("t", {"q": glob}).matches("t", {"q": value}) is ok


def test_pattern_text_and_errors_in_full() -> None:
    assert CallPattern.of("t", {"q": '{"a": 2, "b": 1}'}).matches("t", {"q": {"b": 1, "a": 2}})
    assert CallPattern.parse('a(x="ab*")').specificity == (1, 1, 2)
    assert CallPattern.parse('a(x="XY*")').specificity == (1, 1, 2)
    assert CallPattern.parse('a(x="[ab]?")').specificity == (1, 1, 2)
    assert str(CallPattern.parse('a(x="é")')) == 'a(x="é")'
    assert CallPattern.parse("a(x='say \"hi\"')").args == (("x", 'say "hi"'),)
    assert CallPattern.parse("a(x='q\\\"z')").args == (("x", 'q"z'),)
    errors = {
        "a b": "Cannot read pattern 'a b': expected tool or tool(arg=\"glob\", ...)",
        'a(x="1", 2="y", and more text here)': 'Cannot read pattern \'a(x="1", 2="y", and '
        'more text here)\' near \' 2="y", and more tex\': arguments are written name="glob", '
        "separated by commas",
        'a(x="\\q")': 'Cannot read pattern \'a(x="\\\\q")\': bad string "\\q": Invalid \\escape',
    }
    for text, message in errors.items():
        with pytest.raises(PatternError) as caught:
            CallPattern.parse(text)
        assert str(caught.value) == message
    for make, message in [
        (
            lambda: CallPattern.of("a b"),
            "Invalid tool name pattern 'a b': no spaces, quotes, "
            "'=', parentheses or control characters",
        ),
        (
            lambda: CallPattern.of("a", {"1x": "y"}),
            "Invalid argument name '1x': a letter or '_', then letters, digits, '_', '.' or '-'",
        ),
        (lambda: CallPattern.of("a", {"x": 1}), "Argument pattern for 'x' must be a string, got 1"),
    ]:
        with pytest.raises(PatternError) as caught:
            make()
        assert str(caught.value) == message


# -- the gate's own words --------------------------------------------------------------


class Published:
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def __call__(self, event: Any) -> None:
        self.events.append(event)


async def test_a_refused_path_is_a_decision_with_its_reason(ws: Path) -> None:
    from workbench.bus_events import PermissionDecisionEvent

    published = Published()
    gate = PermissionGate.for_workspace(ws, publish=published, policy="all")
    result = await gate(call_context(builtin_tool(ws, "read_file"), {"path": "../etc"}))
    assert result is not None and result.block
    assert result.reason == (
        "Permission denied: Path '../etc' uses '..' to climb outside the workspace; only files "
        "inside the workspace can be used"
    )
    (decision,) = published.events
    assert isinstance(decision, PermissionDecisionEvent)
    assert (decision.decision, decision.decided_by, decision.rule, decision.rule_source) == (
        "deny",
        "rule",
        None,
        "workspace",
    )
    assert decision.reason == result.reason


async def test_a_protected_path_under_a_policy_is_denied_in_words(ws: Path) -> None:
    published = Published()
    gate = PermissionGate.for_workspace(ws, publish=published, policy="all")
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": ".git/config", "content": "x"})
    result = await gate(ctx)
    assert result is not None and result.block
    assert result.reason == (
        "Permission denied: write_file would change .git/config, a protected path; only a rule "
        "naming .git or a person can allow that"
    )
    (decision,) = published.events
    assert (decision.decided_by, decision.rule_source) == ("policy", "--approve all")


async def test_unknown_answers_are_refused_and_the_request_waits(ws: Path) -> None:
    from workbench.permissions import AnswerError

    gate = PermissionGate.for_workspace(ws)
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": "a.txt", "content": "x"})
    out: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: _collect(out, gate(ctx, AbortController().signal)))
        while not gate.pending:
            await anyio.sleep(0.001)
        rid = gate.pending[0].request_id
        with pytest.raises(AnswerError) as caught:
            gate.decide(rid, PermissionAnswer("maybe"))  # type: ignore[arg-type]
        assert str(caught.value) == "Unknown answer kind 'maybe'"
        with pytest.raises(AnswerError) as caught:
            gate.decide(rid, PermissionAnswer.always_pattern('write_file(path="b.txt")'))
        assert (
            str(caught.value)
            == 'Pattern write_file(path="b.txt") does not cover this call of write_file'
        )
        assert gate.pending[0].request_id == rid
        gate.decide(rid, PermissionAnswer.always_pattern('write_file(path="./a.txt")'))
    assert out == [None]


async def test_saving_to_an_unwritable_rules_file_is_refused(ws: Path) -> None:
    from workbench.permissions import AnswerError

    blocked = ws / "blocked"
    blocked.write_text("")  # a file where the rules file's directory should be
    gate = PermissionGate.for_workspace(ws, rules_file=blocked / "rules.toml")
    ctx = call_context(builtin_tool(ws, "write_file"), {"path": "a.txt", "content": "x"})
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: _collect([], gate(ctx, AbortController().signal)))
        while not gate.pending:
            await anyio.sleep(0.001)
        rid = gate.pending[0].request_id
        with pytest.raises(AnswerError) as caught:
            gate.decide(rid, PermissionAnswer.always_tool(save=True))
        assert str(caught.value).startswith(
            f"Could not save the rule to {blocked / 'rules.toml'}: "
        )
        gate.decide(rid, PermissionAnswer.deny())


def test_answer_shortcuts() -> None:
    assert PermissionAnswer.allow_once() == PermissionAnswer("allow_once")
    assert PermissionAnswer.always_tool(save=True) == PermissionAnswer(
        "allow_always_tool", save=True
    )
    assert PermissionAnswer.always_pattern("p", save=True) == PermissionAnswer(
        "allow_always_pattern", pattern="p", save=True
    )
    assert PermissionAnswer.deny("no") == PermissionAnswer("deny", reason="no")
    assert PermissionAnswer.edit({"a": 1}) == PermissionAnswer("edit_and_allow", args={"a": 1})


async def test_a_path_glob_written_loosely_still_judges_the_canonical_path(ws: Path) -> None:
    for glob in ["./.env", ".env/", "src/../.env"]:
        (result,) = await run_turn(
            ws, [("read_file", {"path": ".env"})], deny=[f'read_file(path="{glob}")']
        )
        assert result.is_error and "hunter2" not in result.text, glob


async def test_always_allowing_a_tool_does_not_release_a_waiting_protected_call(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws)
    write = builtin_tool(ws, "write_file")
    plain = call_context(write, {"path": "a.txt", "content": "x"})
    hook = call_context(write, {"path": ".git/hooks/pre-push", "content": "x"})
    out: dict[str, Any] = {}

    async def call(key: str, ctx: BeforeToolCallContext) -> None:
        out[key] = await gate(ctx, AbortController().signal)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "plain", plain)
        tg.start_soon(call, "hook", hook)
        while len(gate.pending) < 2:
            await anyio.sleep(0.001)
        first = next(r for r in gate.pending if r.judged["path"] == "a.txt")
        gate.decide(first.request_id, PermissionAnswer.always_tool())
        await anyio.sleep(0.01)
        (waiting,) = gate.pending  # the protected call still waits for its own answer
        assert waiting.judged["path"] == ".git/hooks/pre-push"
        gate.decide(waiting.request_id, PermissionAnswer.deny())
    assert out["plain"] is None and out["hook"].block


def test_a_gate_for_a_missing_directory_judges_paths_as_written(tmp_path: Path) -> None:
    gate = PermissionGate.for_workspace(tmp_path / "missing")
    assert gate.workspace is None and gate.protected_files == ()


def test_an_always_answer_saves_nothing_unless_asked() -> None:
    assert PermissionAnswer("allow_always_tool").save is False
    assert PermissionAnswer.always_tool().save is False
    assert PermissionAnswer.always_pattern().save is False


def test_every_path_argument_of_another_tool_is_judged_not_only_the_first(ws: Path) -> None:
    gate = PermissionGate.for_workspace(ws)
    mcp = AgentTool("srv__put", "Put", "", {"type": "object"}, execute=None, source="mcp:srv")  # type: ignore[arg-type]
    judged = gate.judged_args(mcp, {"mode": "w", "path": str(ws / "src" / "app.py")})
    assert judged == {"mode": "w", "path": "src/app.py"}  # past a first argument that is no path


def test_with_no_rule_at_all_a_call_is_asked_about(ws: Path) -> None:
    from workbench.permissions import RuleSet

    gate = PermissionGate(RuleSet([]))
    assert gate.judge("edit_file", {"path": "a.txt"}) == (None, "ask", None)
    assert gate.judge("anything", {}) == (None, "ask", None)
    assert not gate.may_read("a.txt")  # asked: a search would not show it ...
    gate.policy = "all"
    assert gate.may_read("a.txt")  # ... unless everything is approved


async def test_a_tool_of_yours_named_like_a_reader_is_not_allowed_by_the_defaults(
    ws: Path,
) -> None:
    gate = PermissionGate.for_workspace(ws, policy="none")
    mine = AgentTool(
        "read_file",
        "Read",
        "",
        {"type": "object"},
        execute=None,  # type: ignore[arg-type]
        source="file my_tools.py:3",
    )
    call = ToolCall(id="c1", name="read_file", arguments={"path": "src/app.py"})
    message = AssistantMessage(content=[call], stop_reason="toolUse")
    from workbench.agent.arguments import JsonArguments

    ctx = BeforeToolCallContext(
        message,
        call,
        JsonArguments.model_validate({"path": "src/app.py"}),
        AgentContext(tools=[mine]),
        mine,
    )
    result = await gate(ctx, AbortController().signal)
    assert result is not None and result.block  # asked, and this run approves nothing
    builtin = builtin_tool(ws, "read_file")
    assert (
        await gate(call_context(builtin, {"path": "src/app.py"}), AbortController().signal) is None
    )
