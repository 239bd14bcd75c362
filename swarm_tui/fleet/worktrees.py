"""A git worktree per agent: checked for every agent before any window is made, created on the
agent's own host on branch `swarm/<fleet>/<agent>`, read when the agent goes idle (never
polled), shown as a diff, handed to the judge, and merged home.

Worktrees live in swarm's state directory on each host (`worktrees/<fleet>/<agent>`), never
inside the user's checkout; the user's base checkout is never modified unless it is clean
and a merge was asked for. Git runs through the host's one-off command channel (fleet/git.py
holds the scripts and the parsers of git's machine formats).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Iterable

from swarm_tui import paths
from swarm_tui.config.hosts import LOCAL
from swarm_tui.config.layout import ResolvedAgent
from swarm_tui.errors import ConfigError, SwarmError
from swarm_tui.fleet import git
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.store import OPEN_TASK, Task, TaskStatus
from swarm_tui.hosts.base import Host
from swarm_tui.protocol.models import ChangeView, DiffFileView, DiffView

PREPARE_TIMEOUT = 120.0  # seconds for one host's check or creation of all its worktrees
READ_TIMEOUT = 30.0  # seconds for one read of an agent's change
MERGE_TIMEOUT = 60.0
READS_AT_ONCE = 4  # reads of changes running at once (128 agents may go idle together)
REMOTE_ROOT = "@state/worktrees"  # swarm's state directory on the node (fleet/git.py home)


def branch_of(fleet: str, agent: str) -> str:
    return f"swarm/{fleet}/{agent}"


def worktree_path(fleet: str, agent: str, host: str) -> str:
    """Where an agent's worktree lives on its host: swarm's state directory, not the repo."""
    slug = paths.fleet_slug(fleet)
    if host == LOCAL:
        return str(paths.state_dir() / "worktrees" / slug / agent)
    return f"{REMOTE_ROOT}/{slug}/{agent}"


def branch_problem(branch: str) -> str:
    """Why git would refuse a branch name built from the fleet's and an agent's names."""
    parts = branch.split("/")
    if ".." in branch or any(p.startswith(".") or p.endswith((".lock", ".")) for p in parts):
        return (
            f"{branch} is not a valid git branch name (no '..', no part starting with "
            "'.' or ending with '.' or '.lock'): rename the fleet or the agent"
        )
    return ""


def sh(script: str) -> str:
    """A script run by `sh`, whatever the login shell of the host's user is."""
    return f"sh -c {shlex.quote(script)}"


def _where(agent: Agent) -> str:
    return f"agent {agent.name!r} on {agent.spec.host}"


async def prepare(
    host: Host, fleet: str, specs: list[ResolvedAgent], create: bool, checked: bool = False
) -> tuple[dict[str, git.Prepared], list[str]]:
    """Check (and with `create`, make) the worktrees of agents on one host: what each got,
    and one line per problem (agent, host, what to do). With `create`, a host where any
    check fails gets none: every agent is checked first (unless `checked` just now)."""
    bad = {
        s.name: f"agent {s.name!r} on {s.host}: {why}"
        for s in specs
        if (why := branch_problem(branch_of(fleet, s.name)))
    }
    specs = sorted((s for s in specs if s.name not in bad), key=lambda s: s.repo)

    def calls(mode: str) -> str:
        return "".join(
            "one "
            + " ".join(
                shlex.quote(v)
                for v in (
                    mode,
                    s.name,
                    s.repo,
                    worktree_path(fleet, s.name, s.host),
                    branch_of(fleet, s.name),
                    s.base,
                    f"{fleet}/{s.name}",
                )
            )
            + "\n"
            for s in specs
        )

    script = git.PREPARE + "failed=\n"
    if not create:
        script += calls("check")
    elif checked:
        script += calls("create")
    else:  # only when every check passed: a host gets all its worktrees or none
        script += calls("check") + '[ -n "$failed" ] || {\n' + calls("create") + "}\n"
    if not specs:
        return {}, list(bad.values())
    rc, out = await host.shell(sh(script), timeout=PREPARE_TIMEOUT)
    found = git.parse_prepared(out)
    problems = list(bad.values())
    for spec in specs:
        got = found.get(spec.name)
        where = f"agent {spec.name!r} on {spec.host}"
        if got is None:
            last = (out.strip().splitlines() or [f"exit {rc}"])[-1]
            problems.append(f"{where}: its worktree could not be checked ({last})")
        elif not got.ok:
            problems.append(f"{where}: {got.detail}")
    return found, problems


class Worktrees:
    """The fleet's worktrees: prepared per host, read per agent."""

    def __init__(
        self,
        fleet: str,
        host_of: Callable[[Agent], Host],
        changed: Callable[[Agent], None],
        notice: Callable[[str], None],
        agents: Callable[[], Iterable[Agent]] = tuple,
    ):
        self.fleet = fleet
        self._agents = agents
        self._host_of = host_of
        self._changed = changed
        self._notice = notice
        self._reads = asyncio.Semaphore(READS_AT_ONCE)
        self._wanted: set[str] = set()  # agents whose change should be read (again)
        self._reading: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ preparing
    async def prepare(
        self, host: Host, agents: Iterable[Agent], create: bool, checked: bool = False
    ) -> None:
        """Check (and with `create`, make or re-attach) the worktrees of a host's agents.
        Every problem is one line naming agent, host and what to do; with any, nothing is
        created on this host and ConfigError is raised."""
        mine = [a for a in agents if a.spec.worktree]
        if not mine:
            return
        found, problems = await prepare(host, self.fleet, [a.spec for a in mine], create, checked)
        if problems:
            raise ConfigError(
                "\n".join(f"{p} (worktree = true; no agent was started)" for p in problems)
            )
        if create:
            made: dict[str, int] = {}
            for agent in mine:
                got = found[agent.name]
                agent.workdir, agent.base, agent.repo_prefix = got.detail, got.base, got.prefix
                made[got.how] = made.get(got.how, 0) + 1
                self.refresh(agent)
            if made.get("created") or made.get("reattached"):
                self._notice(
                    f"worktrees on {host.name}: "
                    + ", ".join(f"{n} {how}" for how, n in sorted(made.items()))
                )

    # ------------------------------------------------------------------ reading
    def refresh(self, agent: Agent) -> None:
        """Read the agent's change again soon (once, however often asked meanwhile)."""
        if not agent.workdir:
            return
        self._wanted.add(agent.name)
        if agent.name in self._reading:
            return  # the running read reads it again when it is done
        task = asyncio.create_task(self._refresh(agent), name=f"changes-{agent.name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self, agent: Agent) -> None:
        self._reading.add(agent.name)
        try:
            while agent.name in self._wanted:
                self._wanted.discard(agent.name)
                async with self._reads:
                    try:
                        view = await self.read(agent, patches=False)
                        agent.changes = _summary(view)
                    except SwarmError as exc:
                        agent.changes = ChangeView(
                            branch=branch_of(self.fleet, agent.name),
                            base=agent.base,
                            error=str(exc),
                        )
                self._changed(agent)
        finally:
            self._reading.discard(agent.name)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def read(self, agent: Agent, patches: bool = True) -> DiffView:
        """The agent's change against its base, read now on its host."""
        if not agent.workdir:
            raise SwarmError(
                f"{agent.name} has no worktree (worktree = true in the layout gives it one)"
            )
        marked = git.Marked()
        script = git.read_script(marked, agent.workdir, agent.base, patches)
        rc, out = await self._host_of(agent).shell(sh(script), timeout=READ_TIMEOUT)
        parts = marked.parts(out)
        if "end" not in parts:
            why = (out.split("\0", 1)[0].strip().splitlines() or [f"exit {rc}"])[-1]
            raise SwarmError(f"{_where(agent)}: its worktree could not be read: {why}")
        untracked = frozenset(n.removeprefix("./") for n in git.names(parts["untracked"]))
        large = [n.removeprefix("./") for n in git.names(parts["large"])]
        files = git.parse_numstat(parts["committed"], "committed") + git.parse_numstat(
            parts["uncommitted"], "uncommitted", untracked
        )
        files += [
            DiffFileView(path=n, binary=True, part="uncommitted", untracked=True) for n in large
        ]
        totals = git.parse_numstat(parts["all"], "uncommitted") + files[len(files) - len(large) :]
        trimmed = (
            (
                f"{len(large)} untracked file(s) of {git.UNTRACKED_MAX_KB // 1024} MB or "
                "more are listed, not read"
            )
            if large
            else ""
        )
        committed, uncommitted = (
            parts.get("committed_patch", ""),
            parts.get("uncommitted_patch", ""),
        )
        if max(len(committed), len(uncommitted)) >= git.PATCH_MAX:
            trimmed = "; ".join(filter(None, [trimmed, f"patches cut at {git.PATCH_MAX} bytes"]))
        return DiffView(
            agent=agent.name,
            host=agent.spec.host,
            worktree=agent.workdir,
            branch=branch_of(self.fleet, agent.name),
            base=agent.base,
            merge_base=parts["mb"].strip(),
            commits=[c for c in parts.get("commits", "").splitlines() if c],
            files=files,
            committed=committed,
            uncommitted=uncommitted,
            trimmed=trimmed,
            conflicts=git.conflicts(parts["conflicts"], parts["merge_rc"]),
            added=sum(f.added for f in totals),
            deleted=sum(f.deleted for f in totals),
            changed=len({f.path for f in totals}),
        )

    async def for_judge(self, agent: Agent) -> str:
        """The change as a judge's review prompt carries it: the files with their counts,
        then the patches up to the agent's `judge_diff` characters, and what was left out."""
        if not agent.workdir:
            return "(this agent has no worktree: read its files yourself)"
        try:
            view = await self.read(agent, patches=True)
        except SwarmError as exc:
            return f"(its change could not be read: {exc})"
        lines = [
            f"Branch {view.branch} against {view.base} (worktree {view.worktree} on {view.host}):"
        ]
        for f in view.files:
            counts = "binary" if f.binary else f"+{f.added} -{f.deleted}"
            name = f"{f.old_path} -> {f.path}" if f.old_path else f.path
            what = "untracked" if f.untracked else f.part
            lines.append(f"  {name}  {counts}  ({what})")
        if not view.files:
            lines.append("  (no change against the base)")
        limit = agent.spec.judge_diff
        text = "\n".join(lines)
        patch = view.committed + view.uncommitted
        if limit and patch:
            kept, left = git.trim(patch, limit)
            text += "\n\nThe diff:\n" + kept
            if left:
                text += (
                    f"\n[{len(left)} file(s) left out of this prompt to keep it under "
                    f"{limit} characters: "
                    + "; ".join(left[:20])
                    + (" …" if len(left) > 20 else "")
                    + ". Read them in the worktree.]"
                )
        if view.trimmed:
            text += f"\n[{view.trimmed}]"
        return text

    # ------------------------------------------------------------------ merging
    async def merge(
        self,
        agent: Agent,
        into: str = "",
        squash: bool = False,
        force: bool = False,
        check: bool = False,
    ) -> str:
        """Merge the agent's branch into its base (or `into`) without touching any worktree
        but the base's own clean checkout; one line saying what was done (with `check`: what
        a merge would do, nothing changed). Refused (raises) on conflicts, a dirty base
        checkout, or uncommitted work in the agent's worktree (unless `force`: its commits
        are merged, the rest stays, and the line says so)."""
        if not agent.workdir:
            raise SwarmError(f"{agent.name} has no worktree: nothing to merge")
        into = into or agent.base
        branch = branch_of(self.fleet, agent.name)
        repo = agent.spec.repo
        message = (
            f"Merge {branch} into {into}"
            if not squash
            else f"{agent.name}'s work (squashed {branch})"
        )
        script = (
            git.PRELUDE
            + git.assign(
                repo=repo,
                wt=agent.workdir,
                br=branch,
                into=into,
                message=message,
                squash="1" if squash else "0",
                force="1" if force else "0",
                check="1" if check else "0",
            )
            + git.MERGE
        )
        rc, out = await self._host_of(agent).shell(sh(script), timeout=MERGE_TIMEOUT)
        lines = out.strip().splitlines() or [f"exit {rc}"]
        left = 0
        if lines[0].startswith("LEFT ") and lines[0][5:].strip().isdigit():
            left = int(lines.pop(0)[5:])
            lines = lines or [f"exit {rc}"]
        word, _, rest = lines[0].partition(" ")
        stays = (
            (
                f"; {left} uncommitted file(s) stay in {agent.name}'s worktree (no merge "
                "takes them: ask it to commit)"
            )
            if left
            else ""
        )
        if not check:
            self.refresh(agent)
        if word == "READY":
            return (
                f"would merge {rest} commit(s) of {branch} into {into}"
                f"{' as one squashed commit' if squash else ''}{stays}"
            )
        if word == "MERGED":
            for other in self._agents():  # the base moved: their conflicts may have changed
                if (
                    other is not agent
                    and other.spec.repo == repo
                    and other.spec.host == agent.spec.host
                ):
                    self.refresh(other)
            commit, _, at = rest.partition(" ")
            where = f", its checkout {at} moved forward" if at else ""
            after = (
                (
                    f"; the branch keeps its own commits, so ask {agent.name} to merge "
                    f"{into} into it before it goes on (or its next change conflicts)"
                )
                if squash
                else ""
            )
            return (
                f"merged {branch} into {into} ({'squashed, ' if squash else ''}commit "
                f"{commit}{where}){stays}{after}"
            )
        if word == "NOTHING":
            return f"nothing to merge: {into} already has everything {branch} holds{stays}"
        if word == "CONFLICT":
            files = ", ".join(lines[1:21]) + (" …" if len(lines) > 21 else "")
            raise SwarmError(
                f"{branch} conflicts with {into} in {files}: nothing was merged "
                f"({into} is untouched); ask {agent.name} to merge {into} into "
                "its branch and resolve them"
            )
        if word == "DIRTY":
            raise SwarmError(
                f"{into} is checked out at {rest} with uncommitted changes: "
                "nothing was merged (commit or stash them there, then merge)"
            )
        if word == "UNCOMMITTED":
            raise SwarmError(
                f"{agent.name}'s worktree has {rest} uncommitted file(s): nothing "
                f"was merged; ask it to commit, or --force merges its commits "
                "only"
            )
        raise SwarmError(f"{_where(agent)}: merge failed: {rest or lines[0]}")


def _summary(view: DiffView) -> ChangeView:
    return ChangeView(
        added=view.added,
        deleted=view.deleted,
        files=view.changed,
        branch=view.branch,
        base=view.base,
        conflicts=None if view.conflicts is None else bool(view.conflicts),
    )


async def clean(host: Host, fleet: str, specs: list[ResolvedAgent]) -> list[str]:
    """After `swarm down --clean`, on one host: remove each worktree whose branch is merged
    into its base and holds nothing uncommitted; keep the rest. One line per agent."""
    mine = [s for s in specs if s.worktree]
    if not mine:
        return []
    calls = "".join(
        "one "
        + " ".join(
            shlex.quote(v)
            for v in (
                s.name,
                s.repo,
                worktree_path(fleet, s.name, s.host),
                branch_of(fleet, s.name),
                s.base,
            )
        )
        + "\n"
        for s in mine
    )
    rc, out = await host.shell(sh(git.CLEAN + calls), timeout=120)
    done = {name: (what, detail) for name, what, detail in git.parse_clean(out)}
    lines = []
    for s in mine:
        what, detail = done.get(s.name, ("KEPT", f"not checked ({out.strip()[-200:]})"))
        word = {"REMOVED": "removed", "KEPT": "kept", "GONE": "no worktree"}.get(what, what)
        lines.append(f"{s.name} on {s.host}: worktree {word}: {detail}")
    return lines


def merge_refusal(agent: str, tasks: list[Task]) -> str:
    """Why an agent's branch may not be merged yet ("" when it may): its work is merged
    after a judge found its task complete, unless a human forces it."""
    force = "; `swarm merge --force` merges it anyway"
    if not tasks:
        return f"{agent} has no task a judge found complete: nothing was merged{force}"
    last = tasks[-1]
    open_ = [t for t in tasks if t.status in OPEN_TASK]
    if open_:
        return (
            f"{agent}'s task #{open_[0].id} is {open_[0].status}, not complete: nothing "
            f"was merged{force}"
        )
    if last.status != TaskStatus.COMPLETE:
        return f"{agent}'s last task #{last.id} is {last.status}: nothing was merged{force}"
    return ""
