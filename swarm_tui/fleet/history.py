"""An agent's history: tmux's scrollback of its pane, read on demand, and grep over it.

History is read with one `capture-pane -p -J -e -S -N` sent down the host's control channel,
the one the tiles' captures use (no new SSH connection, no tmux subprocess): `-J` joins the
rows of a wrapped line, `-e` keeps colours. Every read is bounded: lines asked for
(MAX_HISTORY_LINES), characters of one line, bytes of the whole answer, and a deadline on
every wait. An agent on a host that is down, or with no pane yet, is one line saying so.

Who may read: the human, and every agent, about every agent, as with `swarm ls`. Reading
changes nothing, and refusing would protect nothing: the fleet's agents run as one user on
each host, and any of them can already run `tmux capture-pane` on that user's tmux server.
A reviewer reading a worker's output or a planner grepping the fleet for an error is work
swarm should make easy.

Grep matches in a child process (swarm_tui/fleet/grep.py), killed at a deadline: a pattern
that backtracks without end must never stop the engine.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarm_tui.agents.base import plain
from swarm_tui.errors import HostUnreachable, SwarmError, TmuxError
from swarm_tui.fleet.agent import Agent
from swarm_tui.protocol.models import GrepHits, GrepLine, GrepView, HistoryView
from swarm_tui.protocol.requests import MAX_HISTORY_LINES, Grep, History
from swarm_tui.tmux.commands import quote

if TYPE_CHECKING:
    from swarm_tui.fleet.engine import Fleet

# the child that matches: a stdlib-only script, run by path (the engine's working directory
# need not hold the package)
GREP_CHILD = Path(__file__).with_name("grep.py")
MAX_LINE = 8_000  # characters kept of one line (`-J` makes one line of a wrapped paragraph)
MAX_BYTES = 4 * 1024 * 1024  # characters of one answer, about: the newest lines are kept
DEADLINE = 10.0  # seconds for one capture, from sending to the last byte of the answer
GREP_DEADLINE = 20.0  # seconds for the matching of one grep, all agents together
MAX_MATCHES = 1000  # matches one grep returns
MAX_GREP_BYTES = 2 * 1024 * 1024  # characters of one grep's answer, about

# what ends a line and shows nothing: spaces, and the colour changes around them
_TRAILING = re.compile(r"(?:[ \t]|\x1b\[[0-9;:]*m)+$")
_CUT_ESCAPE = re.compile(r"\x1b[^a-zA-Z]*$")  # an escape sequence cut by MAX_LINE


def capture_command(pane: str, lines: int) -> str:
    """The control-mode line that reads `lines` of history above the screen, and the screen."""
    return f"capture-pane -p -J -e -S -{int(lines)} -t {quote(pane)}"


def clean(raw: Sequence[bytes], keep: int) -> tuple[list[str], bool]:
    """A capture's lines as text: each cut to MAX_LINE, trailing blanks dropped (a line's
    and the screen's below the cursor), the newest `keep` lines within MAX_BYTES. Returns
    (lines, whether older lines were left out)."""
    out: list[str] = []
    for data in raw:
        line = data.decode("utf-8", "replace")
        if len(line) > MAX_LINE:
            line = _CUT_ESCAPE.sub("", line[:MAX_LINE]) + "\x1b[0m…"
        out.append(_TRAILING.sub("", line))
    while out and not plain(out[-1]).strip():
        out.pop()
    cut = len(out) > keep
    out = out[-keep:] if keep else []
    size, start = 0, len(out)
    while start > 0 and size + len(out[start - 1]) + 1 <= MAX_BYTES:
        start -= 1
        size += len(out[start]) + 1
    return out[start:], cut or start > 0


def _agent(fleet: Fleet, name: str) -> Agent:
    (agent,) = fleet.resolve([name])
    return agent


async def read_history(fleet: Fleet, agent: Agent, lines: int) -> tuple[list[str], bool]:
    """Up to `lines` of the agent's history and its screen, oldest first (see `clean`);
    raises one line when its host is down, it has no pane, or tmux does not answer."""
    link = fleet.link_of(agent)
    control = link.control
    if not link.connected or control is None:
        raise HostUnreachable(
            f"{agent.name} runs on host {link.name}, which is down ("
            f"{link.detail or 'connecting'}): its history can be read when the host is back"
        )
    if not agent.pane:
        raise SwarmError(
            f"{agent.name} has no tmux pane yet ({agent.state.value}): its "
            "history can be read once it has started"
        )
    try:
        async with asyncio.timeout(DEADLINE):  # a dead link may never drain, never answer
            (future,) = await control.send([capture_command(agent.pane, lines)])
            reply = await future
    except TimeoutError:
        raise HostUnreachable(
            f"{agent.name}'s history: host {link.name} did not answer "
            f"within {DEADLINE:.0f} s; try again"
        ) from None
    except TmuxError as exc:
        raise HostUnreachable(f"{agent.name}'s history: {exc}") from None
    if not reply.ok:
        raise TmuxError(f"{agent.name}'s history: tmux refused: {reply.text()[:200]}")
    return clean(reply.lines, lines)


async def history(fleet: Fleet, req: History) -> HistoryView:
    agent = _agent(fleet, req.agent)
    lines, cut = await read_history(fleet, agent, req.lines)
    return HistoryView(agent=agent.name, lines=lines, truncated=cut)


def compile_pattern(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """The pattern, or one line saying what is wrong with it."""
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise SwarmError(f"grep: bad pattern {pattern!r}: {exc}") from None
    except (OverflowError, RecursionError, ValueError) as exc:
        raise SwarmError(f"grep: bad pattern {pattern!r}: {exc}") from None


async def grep(fleet: Fleet, req: Grep) -> GrepView:
    """Every agent's history (or one agent's) searched for the pattern: runs of matching
    lines with their context, in the fleet's order. With one agent named, its host being
    down is the answer; with all, such agents are listed in `skipped`."""
    compile_pattern(req.pattern, req.ignore_case)  # bad: said here, before any reading
    agents = [_agent(fleet, req.agent)] if req.agent else list(fleet.agents.values())
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        str(GREP_CHILD),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdin = proc.stdin
    assert stdin is not None
    skipped: list[str] = []
    lock = asyncio.Lock()

    async def feed(host_agents: list[Agent]) -> None:
        for agent in host_agents:  # one at a time: one history in memory per host
            try:
                lines, _ = await read_history(fleet, agent, MAX_HISTORY_LINES)
            except SwarmError as exc:
                if req.agent:
                    raise
                skipped.append(str(exc))
                continue
            item = {"agent": agent.name, "lines": [plain(ln) for ln in lines]}
            async with lock:  # whole lines, one agent's after another's
                stdin.write(json.dumps(item).encode() + b"\n")
                await stdin.drain()

    by_host: dict[str, list[Agent]] = {}
    for agent in agents:
        by_host.setdefault(agent.host, []).append(agent)
    head = {
        "pattern": req.pattern,
        "ignore_case": req.ignore_case,
        "context": req.context,
        "limit": MAX_MATCHES,
        "max_bytes": MAX_GREP_BYTES,
    }
    try:
        async with asyncio.timeout(GREP_DEADLINE):  # reading and matching, all agents
            stdin.write(json.dumps(head).encode() + b"\n")
            await asyncio.gather(*(feed(group) for group in by_host.values()))
            stdin.close()
            out, err = await proc.communicate()
    except TimeoutError:
        raise SwarmError(
            f"grep: searching for {req.pattern!r} took over "
            f"{GREP_DEADLINE:.0f} s and was stopped (a pattern such as (a+)+ "
            "can backtrack without end: simplify it)"
        ) from None
    except (BrokenPipeError, ConnectionResetError):  # the child ended early: its error
        out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if proc.returncode != 0 or not out:
        why = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no answer"]
        raise SwarmError(f"grep: the search failed: {why[0]}")
    return _grep_view(json.loads(out), [a.name for a in agents], skipped)


def _grep_view(found: dict[str, Any], order: list[str], skipped: list[str]) -> GrepView:
    rank = {name: i for i, name in enumerate(order)}
    hits = [
        GrepHits(
            agent=h["agent"], lines=[GrepLine(line=n, text=t, match=m) for n, t, m in h["lines"]]
        )
        for h in found["hits"]
    ]
    hits.sort(key=lambda h: (rank.get(h.agent, len(rank)), h.lines[0].line if h.lines else 0))
    return GrepView(
        hits=hits,
        matches=int(found["matches"]),
        truncated=bool(found["truncated"]),
        skipped=skipped,
    )


async def answer(fleet: Fleet, req: History | Grep) -> dict[str, Any]:
    """The socket's answer to a `history` or `grep` request."""
    view = await history(fleet, req) if isinstance(req, History) else await grep(fleet, req)
    return {"ok": True, **view.model_dump()}
