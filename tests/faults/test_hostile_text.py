"""Hostile message text: whatever is sent, the agent gets exactly its documented sanitising.

A property over message text — printable and hostile Unicode, C0 and C1 controls, escape
sequences (`ESC[201~` would end a bracketed paste early), tmux key names, tmux formats and
`#(…)` jobs, shell substitutions, leading `-`, `--all`, `/` and `!`, very long texts, NUL —
sent to mock agents that log every byte they read. For each send:

- it is answered within a deadline (refused in one line when nothing is left to send);
- an accepted message reaches a final status within a deadline, and the bytes the agent read
  between the bracketed-paste markers, and the text it submitted, are exactly the documented
  sanitising of what was sent (README, "How a message is delivered"): CRLF and CR to LF, C0
  controls except tab and newline removed, DEL removed, C1 controls U+0080–U+009F removed;
- nothing executes: canaries (`$(touch F)`, `#(touch F)`, `` `touch F` ``, a tmux
  `run-shell` line) never create their file.

One headless fleet serves the whole module; most sends are raw JSON lines on the fleet's
socket, a subset goes through `swarm send NAME -- TEXT`.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from swarm_tui.testing import Headless, Sandbox, holds, mock_agent, wait_until
from tests.faults.ledger import account

pytestmark = pytest.mark.integration

FLEET = "hostile"
AGENTS = [f"H{i}" for i in range(6)]  # round robin: each agent has time to go idle again
ANSWER_DEADLINE = 10.0  # seconds for the engine to answer a send
DELIVERY_DEADLINE = 30.0  # seconds for an accepted message to reach a final status
FINAL = ("delivered", "failed", "uncertain", "cancelled")
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
CANARY = Path(f"/tmp/swarm-canary-{os.getpid()}")

# The documented rule, written here from the README, not taken from the product.
_STRIPPED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def documented(text: str) -> str:
    """What may reach an agent: CRLF and CR become LF; C0 controls but tab and newline, DEL,
    and the C1 controls U+0080-U+009F are removed."""
    return _STRIPPED.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


HOSTILE = [
    # bracketed paste and escape sequences, in 7-bit and C1 forms
    "\x1b[201~",
    "\x1b[200~",
    "\x1b[201~\r",
    "\x9b201~",
    "\x1b",
    "\x1b[2J",
    "\x1b]0;title\x07",
    "\x1bP+q\x1b\\",
    "\x9d0;t\x9c",
    "\x1b[31mred\x1b[0m",
    "\x1bc",
    "\x1b[?2004l",
    # C0 / C1 controls, NUL, DEL, line ends
    "\x00",
    "\x03",
    "\x04",
    "\x08",
    "\x15",
    "\x1a",
    "\x7f",
    "\x80",
    "\x85",
    "\x9f",
    "\xa0",
    "\r",
    "\n",
    "\r\n",
    "\n\r",
    "\t",
    "\x0b",
    "\x0c",
    # tmux key names and command syntax
    "Enter",
    "C-c",
    "C-m",
    "Escape",
    "BSpace",
    "M-x",
    "C-b d",
    "\\;",
    ";",
    " ; kill-server",
    "#{pane_id}",
    "#{session_name}",
    "#{?1,a,b}",
    "##",
    "#[fg=red]",
    "%if 1",
    "%endif",
    "${HOME}",
    "$HOME",
    "~",
    "\\",
    "\\033",
    "\\012",
    '"',
    "'",
    "{",
    "}",
    # command substitutions and jobs that must never run (the canaries)
    f"$(touch {CANARY}/dollar)",
    f"#(touch {CANARY}/hashjob)",
    f"`touch {CANARY}/tick`",
    f"\nrun-shell 'touch {CANARY}/runshell'\n",
    f"'; touch {CANARY}/quote; '",
    f'"; run-shell "touch {CANARY}/dq"; "',
    # argv and CLI-command look-alikes
    "-",
    "--",
    "--all",
    "-h",
    "--role x",
    "/",
    "/help",
    "!",
    "!rm -rf /tmp/nothing",
    "@file",
    # hostile Unicode: bidi, zero-width, BOM, combining, wide, astral, separators, private use
    "\u202e",
    "\u2066",
    "\u200b",
    "\u200d",
    "\ufeff",
    "e\u0301",
    "\u0300",
    "漢字",
    "😀",
    "👩\u200d💻",
    "\u2028",
    "\u2029",
    "\ue000",
    "\ufffd",
    "\uffff",
    "\U0010ffff",
    "❯ ",
    "─" * 12,
]

# JSON can carry lone surrogates (not Unicode scalar values, so not UTF-8): socket only
SURROGATES = ["\ud800", "\udfff", "\udc80"]
leading = st.sampled_from(["", "", "-", "--all ", "--", "/", "!", "\r", "\x1b[201~", "\x00"])


def texts_from(pieces: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    short = st.lists(pieces, max_size=10).map("".join)
    long = st.builds(
        lambda head, body, n: head + body * n,
        leading,
        st.lists(pieces, min_size=1, max_size=4).map("".join).filter(bool),
        st.integers(200, 1500),
    ).map(lambda t: t[:20000])
    return st.one_of(st.builds(str.__add__, leading, short), long).filter(
        lambda t: documented(t).strip() != "/exit"
    )  # the mock agent's own "quit" command


def has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


texts = texts_from(st.one_of(st.sampled_from(HOSTILE + SURROGATES), st.text(max_size=12)))
cli_texts = texts_from(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))).filter(
    lambda t: "\x00" not in t and t != "-"
)  # argv has no NUL; a lone `-` means stdin


@dataclass
class World:
    """The module's fleet, and what every send so far asked for and got."""

    box: Sandbox
    engine: Headless
    next_agent: Iterator[str] = field(default_factory=lambda: itertools.cycle(AGENTS))
    raw_offset: dict[str, int] = field(default_factory=lambda: dict.fromkeys(AGENTS, 0))
    seen: dict[str, int] = field(default_factory=lambda: dict.fromkeys(AGENTS, 0))
    sent: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in AGENTS})
    got: dict[str, list[str]] = field(default_factory=lambda: {a: [] for a in AGENTS})

    @property
    def socket(self) -> Path:
        return self.box.socket_path(FLEET)

    def status(self, mid: int) -> str:
        db = sqlite3.connect(f"file:{self.box.db_path(FLEET)}?mode=ro", uri=True, timeout=5)
        try:
            row = db.execute("SELECT status FROM messages WHERE id = ?", (mid,)).fetchone()
        finally:
            db.close()
        return row[0] if row else ""

    def detail(self) -> str:
        return self.engine.output()[-3000:]


def ask(path: Path, payload: dict[str, object], timeout: float = ANSWER_DEADLINE) -> dict:
    """One raw JSON request line on the fleet's socket, one answer line (or a failure)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(json.dumps(payload).encode() + b"\n")
        data = b""
        try:
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            raise AssertionError(f"no answer within {timeout} s to {payload!r:.200}") from None
    assert data, f"the engine hung up without an answer to {payload!r:.200}"
    return json.loads(data)


def pastes(raw: bytes) -> list[bytes]:
    """The payloads between bracketed-paste markers, in order."""
    return [part.split(PASTE_END, 1)[0] for part in raw.split(PASTE_START)[1:]]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    box = Sandbox.create(tmp_path_factory.mktemp("hostile"))
    CANARY.mkdir(exist_ok=True)
    try:
        engine = box.start_headless(box.layout(FLEET, *(mock_agent(n) for n in AGENTS)))
        engine.wait_ready(30)
        wait_until(
            lambda: all(
                a["state"] == "idle" for a in ask(box.socket_path(FLEET), {"op": "ls"})["agents"]
            ),
            30,
            "every agent idle",
            engine.output,
        )
        yield World(box, engine)
    finally:
        box.cleanup()
        shutil.rmtree(CANARY, ignore_errors=True)


def canaries() -> list[str]:
    return sorted(p.name for p in CANARY.iterdir())


def check_one(world: World, text: str, via: str) -> None:
    """Send `text` to the next agent and check everything the property says about it."""
    agent = next(world.next_agent)
    # a lone surrogate cannot be typed: refused, or (if taken) typed as U+FFFD
    expected = documented(text).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if via == "cli":
        proc = world.box.swarm("send", agent, "--", text, timeout=ANSWER_DEADLINE + 10)
        if proc.returncode == 0:
            ids = [int(i) for i in re.findall(r"^#(\d+) to ", proc.stdout, re.M)]
            assert len(ids) == 1, f"one message id expected in {proc.stdout!r}"
            accepted, why = True, ""
        else:
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("swarm: "), (
                f"a refused send must say why in one line, got exit {proc.returncode}: "
                f"{proc.stderr!r}"
            )
            accepted, why, ids = False, lines[0], []
    else:
        reply = ask(world.socket, {"op": "send", "to": [agent], "text": text})
        accepted = bool(reply.get("ok"))
        why = str(reply.get("error", ""))
        ids = [m["id"] for m in reply.get("messages", [])] if accepted else []
        if not accepted:
            assert why and "\n" not in why and "Traceback" not in why, reply
    if not expected.strip():
        assert not accepted, f"{text!r} leaves nothing to send, yet it was accepted"
        assert "empty" in why, f"refused, but not as an empty message: {why!r}"
        return
    if has_surrogate(text) and not accepted:
        return  # refused in one line (checked above): fine, nothing was recorded
    assert accepted, f"{text!r} ({via}) was refused: {why!r}"
    (mid,) = ids
    world.sent[agent].append(f"#{mid}")
    status = wait_until(
        lambda: (s := world.status(mid)) in FINAL and s,
        DELIVERY_DEADLINE,
        f"message #{mid} to {agent} to be settled",
        world.detail,
    )
    raw = world.box.raw_received(agent)[world.raw_offset[agent] :]
    world.raw_offset[agent] += len(raw)
    submitted = world.box.received(agent)[world.seen[agent] :]
    world.seen[agent] += len(submitted)
    world.got[agent] += [f"#{mid}" if t == expected else f"stranger {t!r:.60}" for t in submitted]
    assert status == "delivered", f"#{mid} {text!r:.200}: {status}\n{world.detail()}"
    assert pastes(raw) == [expected.encode()], (
        f"bytes between the paste markers differ from the documented sanitising of "
        f"{text!r:.300}: got {pastes(raw)!r:.400}, expected {expected.encode()!r:.400}"
    )
    assert submitted == [expected], (
        f"submitted {submitted!r:.400}, expected [{expected!r:.400}] for {text!r:.300}"
    )
    assert not canaries(), f"something executed: {canaries()} after {text!r}"


SETTINGS = settings(
    deadline=None,
    database=None,
    derandomize=False,
    phases=[Phase.explicit, Phase.generate],  # shrinking costs a send each
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)


def begin(world: World) -> None:
    """This test's books start empty (the fleet and its byte offsets carry over)."""
    world.sent = {a: [] for a in AGENTS}
    world.got = {a: [] for a in AGENTS}


def finish(world: World, ledger, name: str) -> None:
    """No stray typing after the last send, no canary, and the run in the books."""

    def quiet() -> bool:
        return all(len(world.box.received(a)) == world.seen[a] for a in AGENTS) and not canaries()

    try:
        holds(quiet, 1.0, "no further submissions and no canary file", world.detail)
    finally:
        run = ledger.add(account(world.sent, world.got))
        ledger.probe(name, not run.problems)
    assert not run.problems, run.problems


def test_hostile_text_over_the_socket(world: World, ledger) -> None:
    @settings(SETTINGS, max_examples=45)
    @given(text=texts)
    @example(text="\x1b[201~Enter\x1b[200~C-c\r\nEscape\x00")
    @example(text=f"#(touch {CANARY}/a) $(touch {CANARY}/b) `touch {CANARY}/c` #{{pane_id}}")
    @example(text="\x80\x85\x9b201~\x9d0;x\x9c\x9f ok")
    @example(text="\x00\x01\x1b\x7f\x9f")  # nothing left: refused as empty
    @example(text="--all -x\r\n/help\n!ls")
    @example(text="x" * 30000)
    @example(text="line\n" * 200)
    @example(text="\ud800 lone surrogate")
    def prop(text: str) -> None:
        check_one(world, text, "socket")

    begin(world)
    try:
        prop()
    finally:
        finish(world, ledger, "hostile text over the socket")


def test_hostile_text_through_the_cli(world: World, ledger) -> None:
    @settings(SETTINGS, max_examples=12)
    @given(text=cli_texts)
    @example(text="--all")
    @example(text="-n Enter C-c \x1b[201~ #{pane_id}")
    @example(text=f"/x $(touch {CANARY}/cli) #(touch {CANARY}/clihash)")
    def prop(text: str) -> None:
        check_one(world, text, "cli")

    begin(world)
    try:
        prop()
    finally:
        finish(world, ledger, "hostile text through the CLI")
