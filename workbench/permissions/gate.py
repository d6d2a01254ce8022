"""The permission gate: a `before_tool_call` hook that decides from rules or asks.

For each validated call the gate finds the deciding rule (`RuleSet.match`):
"allow" lets it run, "deny" blocks it with a reason the model sees, and "ask"
either applies the headless policy or publishes a `PermissionRequestEvent` and
waits until someone calls `decide(request_id, answer)`. The wait ends at once
when the call's abort signal fires. Every outcome is published as a
`PermissionDecisionEvent` saying who decided (the user, which rule and where it
came from, a session "always", the policy, or an abort) and how long the call
waited, so the transcript of a session explains every call that ran or didn't.

Rules judge what the tool will do, not what the model wrote: for built-in tools
each path-like argument is first turned into the workspace-relative path the tool
opens (`workbench.tools.workspace.Workspace.canonical`; a path the tool would refuse is
refused here, with the same message). Two checks then narrow the rule's verdict:

- `edit_file` is judged as strictly as `read_file` on the same path (its errors
  and diff would show a file's text), so a read deny denies the edit too;
- a changing call into a protected path (`.workbench/`, any `.git`, the project's
  config, the run's own files: see `protected`) is allowed only by a rule naming
  it; any other allow becomes a question.

`may_read` answers the reading tools' "may this file be shown?" the same way, so
a file `read_file` may not read never shows up in a search or a listing.

The gate knows nothing of any UI: the app shows a dialog for each request event
and calls `decide`; tests call `decide` directly.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from workbench.agent import AbortSignal, AgentTool, BeforeToolCallContext, BeforeToolCallResult
from workbench.agent.clock import now_ms
from workbench.agent.config import resolve
from workbench.agent.emit import Emit
from workbench.bus_events import (
    DecidedBy,
    Decision,
    DecisionScope,
    PermissionDecisionEvent,
    PermissionRequestEvent,
)
from workbench.permissions.answers import (
    AnswerError,
    PendingRequest,
    PermissionAnswer,
    always_rule,
)
from workbench.permissions.edits import InvalidEdit, revalidate
from workbench.permissions.hints import apply_hints
from workbench.permissions.hooks import wait_unless_aborted
from workbench.permissions.patterns import (
    CallPattern,
    escape_glob,
    style_of,
    suggest_pattern,
)
from workbench.permissions.protected import (
    as_path,
    names_protected,
    protected_root,
    protected_target,
    protection_warning,
)
from workbench.permissions.rules import (
    RULES_FILE,
    Action,
    Rule,
    RuleSet,
    display_path,
    load_rules,
)

Policy = Literal["ask", "all", "none", "rules"]
"""What happens to "ask": ask a person, allow (all), deny (none), deny as rules-only (rules)."""

_ids = itertools.count(1)
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


class PermissionGate:
    """A `before_tool_call` hook: rules decide, "ask" asks (or follows the policy).

    Args:
        rules: the rules (see `workbench.permissions.rules`); None uses the defaults.
        publish: puts an event on the bus (the app passes `agent.publish`).
        policy: "ask" (a person answers through `decide`), or a headless policy:
            "all" allows every "ask", "none" denies it, "rules" denies it as not
            covered by any allow rule. "deny" rules deny under every policy.
        rules_file: where "always" answers with `save=True` are appended.
        rules_file_display: how that file is named in rule sources.
        workspace: the `workbench.tools.workspace.Workspace` whose canonical paths rules
            judge (None: path arguments are judged as written, normalised).
        protect: more of the run's own files and directories, protected like the
            rules file when they lie in the workspace (the MCP config files in use,
            the sessions directory).
    """

    def __init__(
        self,
        rules: RuleSet | None = None,
        *,
        publish: Emit | None = None,
        policy: Policy = "ask",
        rules_file: Path | None = None,
        rules_file_display: str | None = None,
        workspace: Any = None,
        protect: Sequence[Path] = (),
    ) -> None:
        self.rules = rules if rules is not None else load_rules()
        self.workspace = workspace
        self.protected_files: tuple[str, ...] = ()
        """The run's own files (the rules file, `protect`), relative to the workspace,
        that lie inside it: protected like `.workbench/` itself."""
        if workspace is not None:
            for own in (rules_file, *protect):
                real = Path(os.path.realpath(own)) if own is not None else None
                if real is not None and workspace.contains(real) and real != workspace.root:
                    self.protected_files += (workspace.display(real),)
        self.publish = publish
        self.policy: Policy = policy
        self.rules_file = rules_file
        self.rules_file_display = rules_file_display
        self._pending: dict[str, PendingRequest] = {}

    @classmethod
    def for_workspace(
        cls,
        workspace: Path,
        *,
        publish: Emit | None = None,
        policy: Policy = "ask",
        allow: tuple[str, ...] | list[str] = (),
        ask: tuple[str, ...] | list[str] = (),
        deny: tuple[str, ...] | list[str] = (),
        rules_file: Path | None = None,
        protect: Sequence[Path] = (),
    ) -> PermissionGate:
        """A gate with the defaults, the workspace's rules file and the flags' rules."""
        from workbench.tools.workspace import Workspace

        file = rules_file or workspace / RULES_FILE
        rules = load_rules(workspace, rules_file=file, allow=allow, ask=ask, deny=deny)
        return cls(
            rules,
            publish=publish,
            policy=policy,
            rules_file=file,
            rules_file_display=display_path(file, workspace),
            # no directory, no built-in tools (they need one): paths are judged as written
            workspace=Workspace(workspace) if workspace.is_dir() else None,
            protect=protect,
        )

    @property
    def pending(self) -> list[PendingRequest]:
        """Requests waiting for an answer, oldest first."""
        return list(self._pending.values())

    # -- judging -----------------------------------------------------------------

    def judged_args(self, tool: AgentTool | None, args: dict[str, Any]) -> dict[str, Any]:
        """The arguments as rules judge them: path-like ones in canonical form.

        A built-in tool's path becomes the workspace-relative path the tool will
        open (a path it would refuse raises its `WorkspaceError`). Other tools'
        paths are judged as written, normalised (`protected.as_path`: a `file://`
        URI's path, `//` collapsed, `..` resolved), an absolute path inside the
        workspace in its relative form.
        """
        if self.workspace is None:
            return args
        out = dict(args)
        for name, value in args.items():
            if style_of(name) != "path" or not isinstance(value, str):
                continue
            if tool is not None and tool.source == "builtin":
                out[name] = self.workspace.canonical(value)
            else:
                out[name] = as_path(value, self.workspace.root)
        return out

    @property
    def _root(self) -> Path | None:
        return self.workspace.root if self.workspace is not None else None

    def judge(
        self, tool_name: str, judged: Mapping[str, Any], *, builtin: bool = True
    ) -> tuple[Rule | None, Action, str | None]:
        """(deciding rule, action, protected path or None) for a call's judged arguments.

        The rule is None when no rule matched, or when an allow was turned into a
        question because the call changes a protected path the rule does not name.
        `builtin=False`: the tool only shares a built-in's name (see `RuleSet.match`).
        """
        rule = self.rules.match(tool_name, judged, builtin=builtin, files=self.protected_files)
        action: Action = rule.action if rule is not None else "ask"
        path = judged.get("path")
        if tool_name == "edit_file" and isinstance(path, str):
            reader = self.rules.match("read_file", {"path": path})
            if reader is not None and _STRICTNESS[reader.action] > _STRICTNESS[action]:
                rule, action = reader, reader.action
        target = protected_target(
            tool_name, judged, self.protected_files, builtin=builtin, root=self._root
        )
        if target is not None and action == "allow":
            assert rule is not None
            if not names_protected(rule.pattern, target, self.protected_files):
                rule, action = None, "ask"
        return rule, action, target

    def may_read(self, path: str) -> bool:
        """Whether `read_file` on this workspace-relative path would run without asking.

        The reading tools show a file (a search match, a listing entry) only if so.
        """
        rule = self.rules.match("read_file", {"path": path})
        action = rule.action if rule is not None else "ask"
        return action == "allow" or (action == "ask" and self.policy == "all")

    # -- the hook ----------------------------------------------------------------

    async def __call__(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> BeforeToolCallResult | None:
        name = ctx.tool_call.name
        args = ctx.args.model_dump(mode="json")
        try:
            judged = self.judged_args(ctx.tool, args)
        except OSError as exc:  # the path the tool would refuse: refused before anyone is asked
            reason = f"Permission denied: {exc}"
            await self._decided(ctx, "deny", "rule", None, reason=reason, source="workspace")
            return BeforeToolCallResult(block=True, reason=reason)
        builtin = _is_builtin(ctx.tool)
        rule, action, target = self.judge(name, judged, builtin=builtin)
        if target is None:  # a protected path stays a person's (or an exact rule's) call
            rule, action = apply_hints(name, rule, action, getattr(ctx.tool, "hints", None))
        if action == "allow":
            assert rule is not None
            await self._decided(ctx, "allow", _by(rule), rule)
            return None
        if action == "deny":
            assert rule is not None
            reason = f"Permission denied by rule {rule.text} ({rule.source})"
            await self._decided(ctx, "deny", _by(rule), rule, reason=reason)
            return BeforeToolCallResult(block=True, reason=reason)
        if self.policy != "ask" and target is not None:
            reason = (
                f"Permission denied: {name} would change {target}, a protected path; only a "
                f"rule naming {protected_root(target, self.protected_files)} or a person "
                "can allow that"
            )
            source = f"--approve {self.policy}"
            await self._decided(ctx, "deny", "policy", rule, reason=reason, source=source)
            return BeforeToolCallResult(block=True, reason=reason)
        if self.policy != "ask":
            return await self._apply_policy(ctx, rule)
        return await self._ask(ctx, args, judged, rule, signal, target)

    async def _apply_policy(
        self, ctx: BeforeToolCallContext, rule: Rule | None
    ) -> BeforeToolCallResult | None:
        source = f"--approve {self.policy}"
        asked = f"{rule.text} ({rule.source})" if rule is not None else "no rule"
        if self.policy == "all":
            await self._decided(ctx, "allow", "policy", rule, source=source)
            return None
        # What was denied and why, the same whichever headless policy denied it: a
        # recorded denial reads the same when re-run under another one.
        reason = (
            f"Permission denied: {ctx.tool_call.name} needs approval ({asked}); no allow "
            "rule covers this call and no person approved it"
        )
        await self._decided(ctx, "deny", "policy", rule, reason=reason, source=source)
        return BeforeToolCallResult(block=True, reason=reason)

    async def _ask(
        self,
        ctx: BeforeToolCallContext,
        args: dict[str, Any],
        judged: dict[str, Any],
        rule: Rule | None,
        signal: AbortSignal | None,
        target: str | None,
    ) -> BeforeToolCallResult | None:
        name = ctx.tool_call.name
        suggestion = (
            suggest_pattern(name, judged)
            if target is None
            else CallPattern(name, (("path", escape_glob(target)),))
        )
        req = PendingRequest(
            request_id=f"perm-{next(_ids)}",
            tool_call_id=ctx.tool_call.id,
            tool_name=name,
            args=args,
            judged=judged,
            rule=rule,
            suggested_pattern=str(suggestion),
            tool=ctx.tool,
            protected=protection_warning(
                name, judged, self.protected_files, builtin=_is_builtin(ctx.tool), root=self._root
            ),
        )
        self._pending[req.request_id] = req
        try:
            await self._emit(
                PermissionRequestEvent(
                    request_id=req.request_id,
                    tool_call_id=req.tool_call_id,
                    tool_name=req.tool_name,
                    args=args,
                    description=ctx.tool.description if ctx.tool is not None else "",
                    rule=rule.text if rule is not None else None,
                    rule_source=rule.source if rule is not None else None,
                    suggested_pattern=req.suggested_pattern,
                )
            )
            await wait_unless_aborted(req.answered, signal)
        finally:
            self._pending.pop(req.request_id, None)
        if req.answer is None:  # the abort ended the wait
            reason = "Operation aborted while waiting for permission"
            await self._decided(ctx, "deny", "abort", None, reason=reason, req=req)
            return BeforeToolCallResult(block=True, reason=reason)
        return await self._settle(ctx, req, req.answer)

    async def _settle(
        self, ctx: BeforeToolCallContext, req: PendingRequest, answer: PermissionAnswer
    ) -> BeforeToolCallResult | None:
        if answer.kind == "deny":
            why = f": {answer.reason}" if answer.reason else ""
            reason = f"Permission denied by the user{why}"
            await self._decided(ctx, "deny", "user", None, reason=reason, req=req)
            return BeforeToolCallResult(block=True, reason=reason)
        edited = None
        if req.edited is not None:
            ctx.args = req.edited
            edited = req.edited.model_dump(mode="json")
        scope: DecisionScope = {
            "allow_always_tool": "always_tool",
            "allow_always_pattern": "always_pattern",
        }.get(answer.kind, "once")  # type: ignore[assignment]
        await self._decided(
            ctx, "allow", req.decided_by, req.new_rule, req=req, scope=scope, edited=edited
        )
        return None

    # -- answers -----------------------------------------------------------------

    def decide(self, request_id: str, answer: PermissionAnswer) -> None:
        """Answer a pending request; the waiting call goes on.

        Call it from the event loop the agent runs on (the Textual app does).

        Raises:
            AnswerError: no such pending request, edited arguments that fail
                validation (the message lists each field), a pattern that does
                not parse or does not cover the call, or a rule that cannot be
                saved. The request stays pending, so the person can try again.
        """
        req = self._pending.get(request_id)
        if req is None or req.answered.is_set():
            raise AnswerError(f"No pending permission request {request_id!r} (answered or aborted)")
        if answer.kind == "edit_and_allow":
            try:
                req.edited = revalidate(req.tool, answer.args)
            except InvalidEdit as exc:
                raise AnswerError(str(exc)) from None
        elif answer.kind in ("allow_always_tool", "allow_always_pattern"):
            req.new_rule = always_rule(req, answer, self.rules_file, self.rules_file_display)
            self.rules.add(req.new_rule)
        elif answer.kind not in ("allow_once", "deny"):
            raise AnswerError(f"Unknown answer kind {answer.kind!r}")
        req.answer = answer
        req.answered.set()
        if req.new_rule is not None:
            self._settle_covered(req.new_rule)

    def _settle_covered(self, rule: Rule) -> None:
        """Let other pending calls that the new "always" rule now allows go on."""
        for other in self.pending:
            decider, action, _ = self.judge(
                other.tool_name, other.judged, builtin=_is_builtin(other.tool)
            )
            if not other.answered.is_set() and decider is rule and action == "allow":
                other.answer = PermissionAnswer.allow_once()
                other.new_rule = rule
                other.decided_by = "session"
                other.answered.set()

    # -- events ------------------------------------------------------------------

    async def _emit(self, event: Any) -> None:
        if self.publish is not None:
            await resolve(self.publish(event))

    async def _decided(
        self,
        ctx: BeforeToolCallContext,
        decision: Decision,
        by: DecidedBy,
        rule: Rule | None,
        *,
        reason: str | None = None,
        req: PendingRequest | None = None,
        scope: DecisionScope = "once",
        edited: dict[str, Any] | None = None,
        source: str | None = None,
    ) -> None:
        await self._emit(
            PermissionDecisionEvent(
                request_id=req.request_id if req else None,
                tool_call_id=ctx.tool_call.id,
                tool_name=ctx.tool_call.name,
                decision=decision,
                scope=scope,
                decided_by=by,
                rule=rule.text if rule else None,
                rule_source=source or (rule.source if rule else None),
                reason=reason,
                edited_args=edited,
                waited_ms=round(now_ms() - req.started_ms, 3) if req else 0.0,
            )
        )


def _is_builtin(tool: AgentTool | None) -> bool:
    return tool is not None and tool.source == "builtin"


def _by(rule: Rule) -> DecidedBy:
    return "session" if rule.source == "session" else "rule"
