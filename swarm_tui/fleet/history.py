"""An agent's history: tmux's scrollback of its pane, read on demand, and grep over it.

History is read with one `capture-pane -p -e -S -N` (and the pane's height, which tells its
screen from its history) sent down the host's control channel, the one the tiles' captures
use (no new SSH connection, no tmux subprocess); `-e` keeps colours. Its lines are the
pane's rows as the window showed them, and grep searches those rows: never joined with
`-J`, which glues a row tmux marks wrapped onto the row below, and tmux marks rows that are
no wrapped line (a full-width box or rule the terminal's autowrap moved on from; rows a
resize reflowed and the CLI then drew over): a dialog's rows came out as one line several
windows wide. The blank rows that end the history just above the screen are left out (see
`clean`). Every read is bounded: rows asked for (MAX_HISTORY_LINES), characters of one row,
bytes of the whole answer as sent, requests read at once (MAX_READS: one more is refused,
so agents cannot pile them up), and a deadline on every wait. An agent on a host that is
down, or with no pane yet, is one line saying so.

Who may read: the human, any agent; and an agent, its own history and that of the agents it
may message (the layout's `talks_to`, as for `swarm send`). An agent's screen is what it
says to the agents that work with it; the rest of the fleet is not its business (a grep by
it over "every agent" searches only those it may read, and says which it left out).

Grep matches in a child process (swarm_tui/fleet/grep.py), killed at a deadline: a pattern
that backtracks without end must never stop the engine.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable, Sequence
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
MAX_LINE = 8_000  # characters kept of one row (its colour changes count: a row can be long)
# bytes of one answer's lines as sent (see `encoded_size`): the newest lines are kept; well
# under what a view's client (16 MB) and a node's relay (4 MB, with its framing) take
MAX_BYTES = 3 * 1024 * 1024
DEADLINE = 10.0  # seconds for one capture, from sending to the last byte of the answer
GREP_DEADLINE = 20.0  # seconds for the matching of one grep, all agents together
MAX_MATCHES = 1000  # matches one grep returns
MAX_GREP_BYTES = 2 * 1024 * 1024  # bytes of one grep's answer as sent, about
MAX_READS = 4  # history and grep requests read at once; one more is refused

SGR_PARAMS = frozenset("0123456789;:")  # what a colour change (`ESC[…m`) holds
LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def strip_trailing(line: str) -> str:
    """`line` without what ends it and shows nothing: spaces, tabs and the colour changes
    (`ESC[…m`) among them. One scan from the end, each character looked at once or twice (a
    regular expression anchored at `$` tries every start: quadratic on a long inner run of
    spaces)."""
    end = len(line)
    while end:
        c = line[end - 1]
        if c in " \t":
            end -= 1
            continue
        if c != "m":
            break
        at = end - 2
        while at >= 0 and line[at] in SGR_PARAMS:
            at -= 1
        if at < 1 or line[at] != "[" or line[at - 1] != "\x1b":
            break  # a letter m that is text
        end = at - 1
    return line[:end]


def cut_escape(line: str) -> str:
    """`line` without an escape sequence that its end cut short: from the first ESC after
    its last letter (every sequence ends in one), if any. Linear, as `strip_trailing`."""
    last = len(line) - 1
    while last >= 0 and line[last] not in LETTERS:
        last -= 1
    at = line.find("\x1b", last + 1)
    return line if at < 0 else line[:at]


def encoded_size(line: str) -> int:
    """The bytes `line` takes in a reply as the socket sends it (JSON, ASCII-escaped: an ESC
    or a non-ASCII character is six bytes, one outside the BMP twelve), with its comma."""
    return len(json.dumps(line)) + 1


def capture_command(pane: str, lines: int) -> str:
    """The control-mode line that reads `lines` of history above the screen, and the screen."""
    return f"capture-pane -p -e -S -{int(lines)} -t {quote(pane)}"


def height_command(pane: str) -> str:
    """The control-mode line that reads the pane's height: the capture's last rows that are
    its screen (sent just before the capture, on the same channel as the resizes)."""
    return f"display-message -p -t {quote(pane)} {quote('#{pane_height}')}"


def _blank(line: str) -> bool:
    return not plain(line).strip()


def clean(raw: Sequence[bytes], keep: int, screen: int = 0) -> tuple[list[str], bool]:
    """A capture's lines as text: each cut to MAX_LINE, trailing blanks dropped (a line's
    and the screen's below the cursor), the newest `keep` lines within MAX_BYTES as sent.
    `screen`: how many of the last rows are the screen (0: not known). The blank rows that
    end the history above it are dropped too: a full-screen CLI's empty rows between its
    transcript and its input box, pushed up when its window got shorter (tmux takes rows off
    the top), dozens of them after a tile's first sizing. Returns (lines, whether older lines
    were left out)."""
    out: list[str] = []
    for data in raw:
        line = data.decode("utf-8", "replace")
        if len(line) > MAX_LINE:
            line = cut_escape(line[:MAX_LINE]) + "\x1b[0m…"
        out.append(strip_trailing(line))
    if 0 < screen <= len(out):
        top = end = len(out) - screen  # the screen's first row
        while top and _blank(out[top - 1]):
            top -= 1
        del out[top:end]
    while out and _blank(out[-1]):
        out.pop()
    cut = len(out) > keep
    out = out[-keep:] if keep else []
    size, start = 0, len(out)
    while start > 0 and size + encoded_size(out[start - 1]) <= MAX_BYTES:
        start -= 1
        size += encoded_size(out[start])
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
            height, capture = await control.send(
                [height_command(agent.pane), capture_command(agent.pane, lines)]
            )
            tall, reply = await height, await capture
    except TimeoutError:
        raise HostUnreachable(
            f"{agent.name}'s history: host {link.name} did not answer "
            f"within {DEADLINE:.0f} s; try again"
        ) from None
    except TmuxError as exc:
        raise HostUnreachable(f"{agent.name}'s history: {exc}") from None
    if not reply.ok:
        raise TmuxError(f"{agent.name}'s history: tmux refused: {reply.text()[:200]}")
    rows = tall.text().strip() if tall.ok else ""
    return clean(reply.lines, lines, int(rows) if rows.isascii() and rows.isdigit() else 0)


MayRead = Callable[[Agent], bool]  # whether the request's sender may read that agent's history


class Readers:
    """At most MAX_READS history and grep requests at once: one more is refused at once
    (never queued: a queue is a pile too)."""

    def __init__(self, limit: int = MAX_READS):
        self.limit = limit
        self._slots = asyncio.Semaphore(limit)

    async def answer(self, fleet: Fleet, req: History | Grep, may_read: MayRead) -> dict[str, Any]:
        """The socket's answer to a `history` or `grep` request."""
        if self._slots.locked():
            raise SwarmError(
                f"{self.limit} history or grep requests are being read now, swarm's "
                "limit: nothing was read; try again in a few seconds"
            )
        async with self._slots:
            view: HistoryView | GrepView
            if isinstance(req, History):
                view = await history(fleet, req, may_read)
            else:
                view = await grep(fleet, req, may_read)
            return {"ok": True, **view.model_dump()}


def _refused(agent: Agent) -> SwarmError:
    return SwarmError(
        f"{agent.name}'s history may be read by the human and the agents that may message "
        f"it (the layout's talks_to): nothing was read"
    )


async def history(fleet: Fleet, req: History, may_read: MayRead = lambda _: True) -> HistoryView:
    agent = _agent(fleet, req.agent)
    if not may_read(agent):
        raise _refused(agent)
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


async def grep(fleet: Fleet, req: Grep, may_read: MayRead = lambda _: True) -> GrepView:
    """Every agent's history (or one agent's) searched for the pattern: runs of matching
    lines with their context, in the fleet's order. With one agent named, its host being
    down is the answer; with all, such agents are listed in `skipped`, as are those the
    sender may not read."""
    compile_pattern(req.pattern, req.ignore_case)  # bad: said here, before any reading
    skipped: list[str] = []
    if req.agent:
        agents = [_agent(fleet, req.agent)]
        if not may_read(agents[0]):
            raise _refused(agents[0])
    else:
        agents = [a for a in fleet.agents.values() if may_read(a)]
        if hidden := [a.name for a in fleet.agents.values() if not may_read(a)]:
            skipped.append(
                f"{', '.join(hidden)}: the layout's talks_to does not let who asked read them"
            )
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
