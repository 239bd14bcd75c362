"""The mock agent: a stand-in agent CLI for the demo, the tests and the benchmarks.

`python -m swarm_tui.agents.mock` draws the screen a real agent CLI draws: a transcript, a busy
spinner with "esc to interrupt" and a token counter while it works, a context-left percentage
that falls, an input box between two rules that takes bracketed pastes, and now and then a
permission prompt. A seeded script makes it go quiet or give up ("I've done my best, stopping
now") before its task is done. Like real CLIs, an Enter that arrives right after fast input is
taken as a newline, not a submit. Every submitted message is appended to `--log` (JSON lines),
every byte read from the terminal to `--raw-log`.
Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import signal
import sys
import termios
import time
import tty
from dataclasses import dataclass, field

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"
HANDOFF_FILE = re.compile(r"handoff note .*? to the file (\S+?):", re.S)
REVIEW_NUMBER = re.compile(r"Review number: (R-[0-9a-f]+)")
WORDS = ["parser", "scheduler", "cache", "tests", "kernel", "loader", "index", "planner"]


@dataclass
class Work:
    """The message being worked on and how this turn will end."""

    started: float
    duration: float
    ending: str  # "done" | "give-up" | "quiet"
    permission_at: float | None
    tokens: int = 0
    next_line: float = 0.0


@dataclass
class MockAgent:
    name: str
    model: str
    rng: random.Random
    work_mean: float
    permission_rate: float
    give_up_rate: float
    quiet_rate: float
    enter_guard: float
    log_path: str
    out: int = 1
    draft: str = ""
    pastes: list[tuple[str, str]] = field(default_factory=list)  # (marker, text)
    transcript: list[str] = field(default_factory=list)
    context: float = 100.0
    work: Work | None = None
    permission: str | None = None
    ready_at: float = 0.0
    last_input: float = 0.0
    submitted: int = 0
    frame: int = 0
    ctrl_c_at: float = 0.0
    dirty: bool = True
    task: str = ""
    give_up_first: int = 0  # this many turns give up before any turn finishes
    claims_done: bool = False  # run `swarm done` when a turn ends (as told to)
    edits: str = ""  # "write": each finished turn changes a file in its directory; "commit":
    # and commits it (a mock of an agent that changes code, for worktrees)
    verdict: str = ""  # as a judge: the verdict line this turn ends with
    # transcript lines that leave the screen go to the terminal's scrollback, as a CLI
    # drawing on the normal screen (Claude Code, Codex) leaves them; else the alternate screen
    scrollback: bool = False
    said: int = 0  # transcript entries ever said
    pushed: int = 0  # entries (by that count) already scrolled into the scrollback

    # ---------------------------------------------------------------- input
    def on_text(self, text: str, pasted: bool) -> None:
        now = time.monotonic()
        if pasted and (text.count("\n") >= 3 or len(text) > 800):
            marker = f"[Pasted text #{len(self.pastes) + 1} +{text.count(chr(10)) + 1} lines]"
            self.pastes.append((marker, text))
            self.draft += marker
        else:
            self.draft += text
        self.last_input = now
        self.dirty = True

    def on_enter(self) -> None:
        now = time.monotonic()
        if now - self.last_input < self.enter_guard:
            # a burst of input is still arriving: like real CLIs, this Enter is a newline
            self.on_text("\n", pasted=False)
            return
        if self.permission is not None:
            self.answer_permission("1")
            return
        if now < self.ready_at or self.work is not None:
            return  # input not ready: the keystroke is lost, as in a real CLI
        text = self.draft
        for marker, pasted in self.pastes:
            text = text.replace(marker, pasted, 1)
        self.draft, self.pastes = "", []
        self.dirty = True
        if text.strip():
            self.submit(text)

    def on_backspace(self) -> None:
        self.draft = self.draft[:-1]
        self.dirty = True

    def on_ctrl_c(self) -> bool:
        """Clear the draft; a second ctrl-c on an empty box exits."""
        now = time.monotonic()
        if self.draft:
            self.draft, self.pastes = "", []
            self.dirty = True
            return False
        if now - self.ctrl_c_at < 2:
            return True
        self.ctrl_c_at = now
        return False

    def interrupt(self) -> None:
        if self.work is not None:
            self.work = None
            self.permission = None
            self.say("⎿ Interrupted by user")

    def answer_permission(self, key: str) -> None:
        if self.permission is None:
            return
        allowed = key in ("1", "y", "\r")
        self.say(f"⎿ {'Allowed' if allowed else 'Denied'}: {self.permission}")
        self.permission = None
        if self.work is not None:
            self.work.permission_at = None

    # ---------------------------------------------------------------- work
    def submit(self, text: str) -> None:
        self.submitted += 1
        self.log(text)
        first = text.splitlines()[0] if text.splitlines() else ""
        extra = f" (+{text.count(chr(10))} lines)" if "\n" in text else ""
        self.say(f"> {first[:200]}{extra}")
        if text.strip() == "/exit":
            raise SystemExit(0)
        if text.strip() == "/clear":  # a fresh conversation, as real CLIs do it
            self.transcript, self.context, self.task = [], 100.0, ""
            self.say("(conversation cleared)")
            return
        note = HANDOFF_FILE.search(text)
        if note:
            self.write_handoff(note.group(1))
        elif not text.startswith("[message from"):
            self.task = first[:120]
        now = time.monotonic()
        duration = max(0.3, self.rng.uniform(0.5, 1.5) * self.work_mean)
        roll = self.rng.random()
        self.verdict = judge_verdict(text) if "VERDICT <review number>" in text else ""
        if self.give_up_first > 0 and not self.verdict and not text.startswith("[message"):
            self.give_up_first -= 1
            ending = "give-up"
        elif self.verdict:
            ending = "done"
        elif roll < self.give_up_rate:
            ending = "give-up"
        elif roll < self.give_up_rate + self.quiet_rate:
            ending = "quiet"
        else:
            ending = "done"
        perm = now + duration * 0.4 if self.rng.random() < self.permission_rate else None
        self.work = Work(
            started=now, duration=duration, ending=ending, permission_at=perm, next_line=now + 0.6
        )

    def tick(self) -> None:
        work = self.work
        now = time.monotonic()
        if work is None:
            return
        self.frame += 1
        self.dirty = True
        if self.permission is not None:
            return
        if work.permission_at is not None and now >= work.permission_at:
            cmd = self.rng.choice(["pytest -q", "make build", "rm -rf build/", "git push"])
            self.permission = f"run `{cmd}`"
            return
        work.tokens += self.rng.randint(20, 90)
        if now >= work.next_line:
            work.next_line = now + self.rng.uniform(0.5, 1.4)
            verb = self.rng.choice(["Reading", "Editing", "Searching", "Running tests in"])
            self.say(f"● {verb} src/{self.rng.choice(WORDS)}.py")
        if now - work.started >= work.duration:
            self.context = max(1.0, self.context - self.rng.uniform(2, 6))
            self.work = None
            if self.verdict:
                self.say("● I read the work itself.")
                self.say(self.verdict)
                self.verdict = ""
                return
            if work.ending == "done":
                summary = f"updated the {self.rng.choice(WORDS)}"
                if self.edits:
                    self.edit(summary)
                self.say(f"● Done: {summary} ({work.tokens} tokens).")
                self.claim(summary)
            elif work.ending == "give-up":
                self.say("● I've done my best, stopping now.")
                self.claim("I've done my best")

    def claim(self, note: str) -> None:
        """Run `swarm done`, as an agent told to would, when it has a task."""
        if not (self.claims_done and self.task and os.environ.get("SWARM_TOKEN")):
            return
        import subprocess
        import threading

        child = subprocess.Popen(
            ["swarm", "done", "--note", note],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        threading.Thread(target=child.wait, daemon=True).start()  # reaped: no zombie left

    def edit(self, summary: str) -> None:
        """Change a file of its working directory, as a coding agent would (and commit it)."""
        import subprocess

        path = f"{self.name.lower()}_notes.py"
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(
                    f"# turn {self.submitted}: {self.task or 'no task'}\n"
                    f"{summary.split()[-1]}_{self.submitted} = {self.submitted}\n"
                )
        except OSError as exc:
            self.say(f"● could not edit {path}: {exc}")
            return
        self.say(f"● Edited {path}")
        if self.edits == "commit":
            who = ["-c", f"user.name={self.name}", "-c", f"user.email={self.name}@swarm.invalid"]
            for argv in (["git", "add", path], ["git", *who, "commit", "-q", "-m", summary]):
                subprocess.run(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=10,
                    check=False,
                )

    def write_handoff(self, path: str) -> None:
        try:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(
                    f"# Handoff from {self.name}\n\nWorking on: {self.task or 'nothing yet'}"
                    f"\nDone: {self.submitted - 1} messages handled.\nLeft: finish it.\n"
                )
        except OSError as exc:
            self.say(f"● could not write the handoff note: {exc}")

    def say(self, line: str) -> None:
        self.said += 1
        self.transcript.append(line)
        # with a scrollback, what has not scrolled into it yet stays until it has
        del self.transcript[: -max(500, self.said - self.pushed if self.scrollback else 0)]
        self.dirty = True

    def log(self, text: str) -> None:
        if not self.log_path:
            return
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"agent": self.name, "time": time.time(), "text": text}) + "\n")

    # ---------------------------------------------------------------- screen
    def render(self) -> bytes:
        cols, rows = os.get_terminal_size(self.out)
        rule = "─" * cols
        now = time.monotonic()
        bottom: list[str] = []
        if now < self.ready_at:
            bottom.append(f"{SPINNER[self.frame % len(SPINNER)]} Starting {self.model}…")
        elif self.work is not None and self.permission is None:
            secs = int(now - self.work.started)
            spin = SPINNER[self.frame % len(SPINNER)]
            # as Claude Code's does, the line drops its counters before it is cut
            forms = (
                f"({secs}s · ↓ {self.work.tokens} tokens · esc to interrupt)",
                f"({secs}s · esc to interrupt)",
                "(esc to interrupt)",
            )
            bottom.append(
                next(
                    (f"{spin} Working… {f}" for f in forms if len(f) + len("⠋ Working… ") <= cols),
                    f"{spin} Working… {forms[-1]}",
                )
            )
        if self.permission is not None:
            bottom += [
                "╭" + "─" * (cols - 2) + "╮",
                f"│ Do you want to {self.permission}?",
                "│ ❯ 1. Yes",
                "│   2. No, and tell the agent what to do differently (esc)",
                "╰" + "─" * (cols - 2) + "╯",
            ]
        else:
            lines = self.draft.split("\n")
            box = [("❯ " if i == 0 else "  ") + ln for i, ln in enumerate(lines)][-6:]
            bottom += [rule, *box, rule]
        bottom.append(f"  {int(self.context)}% context left · ? for shortcuts")
        head = [f"✻ mock-agent 1.0 · {self.model} · {self.name}", ""]
        room = max(0, rows - len(head) - len(bottom))
        off, entries = "", self.transcript
        if self.scrollback:  # what has scrolled off never comes back (as on a terminal)
            off = self.scroll_off(cols, rows, room)
            entries = entries[max(0, self.pushed - (self.said - len(entries))) :]
        body = [ln for t in entries for ln in wrap(t, cols)][-room:] if room else []
        body += [""] * (room - len(body))
        screen = (head + body + bottom)[:rows]
        out = [off, "\x1b[H"]
        for i, ln in enumerate(screen):
            style = "\x1b[1m" if i == 0 else ""
            out.append(f"{style}{ln[:cols]}\x1b[0m\x1b[K" + ("\r\n" if i < len(screen) - 1 else ""))
        self.dirty = False
        return "".join(out).encode("utf-8")

    def scroll_off(self, cols: int, rows: int, room: int) -> str:
        """Write each transcript entry that no longer fits on the screen on its top row and
        scroll the whole screen up a row (a line feed on the bottom row): the terminal keeps
        it in its scrollback, in order."""
        base = self.said - len(self.transcript)  # the count of transcript[0]
        shown, first = 0, len(self.transcript)
        while first > 0 and shown + len(wrap(self.transcript[first - 1], cols)) <= room:
            first -= 1
            shown += len(wrap(self.transcript[first], cols))
        out = []
        for i in range(max(self.pushed, base), base + first):
            for line in wrap(self.transcript[i - base], cols):
                out.append(f"\x1b[H{line[:cols]}\x1b[0m\x1b[K\x1b[{rows};1H\n")
        self.pushed = max(self.pushed, base + first)
        return "".join(out)


def judge_verdict(prompt: str) -> str:
    """The mock judge: incomplete when the worker gave up or its screen says it failed."""
    found = REVIEW_NUMBER.search(prompt)
    head = f"VERDICT {found.group(1)}" if found else "VERDICT"
    claim, _, screen = prompt.partition("The worker's screen just now:")
    latest = screen.rsplit("\n> ", 1)[-1]  # the worker's latest turn, after its last prompt
    if "I've done my best" in claim.split("What the worker said:")[-1] + latest:
        return f"{head}: INCOMPLETE: the worker stopped early; the task is not finished"
    if re.search(r"(?i)\b(error|failed|traceback)\b", prompt.split("What the worker said")[-1]):
        return f"{head}: INCOMPLETE: the worker's screen shows failures"
    return f"{head}: COMPLETE"


def wrap(text: str, cols: int) -> list[str]:
    out = []
    for raw in text.split("\n"):
        while len(raw) > cols:
            out.append(raw[:cols])
            raw = raw[cols:]
        out.append(raw)
    return out


class KeyReader:
    """Split raw stdin bytes into text, pastes and keys."""

    def __init__(self) -> None:
        self.buf = b""
        self.in_paste = False
        self.paste = b""

    def feed(self, data: bytes) -> list[tuple[str, str]]:
        self.buf += data
        events: list[tuple[str, str]] = []
        while self.buf:
            if self.in_paste:
                end = self.buf.find(PASTE_END)
                if end < 0:
                    keep = len(PASTE_END) - 1
                    self.paste += self.buf[:-keep] if len(self.buf) > keep else b""
                    self.buf = self.buf[-keep:] if len(self.buf) > keep else self.buf
                    break
                self.paste += self.buf[:end]
                self.buf = self.buf[end + len(PASTE_END) :]
                self.in_paste = False
                text = self.paste.decode("utf-8", "replace").replace("\r\n", "\n")
                events.append(("paste", text.replace("\r", "\n")))
                self.paste = b""
                continue
            if self.buf.startswith(PASTE_START):
                self.in_paste = True
                self.buf = self.buf[len(PASTE_START) :]
                continue
            b = self.buf[0]
            if b == 0x1B:
                if len(self.buf) == 1:
                    events.append(("key", "esc"))
                    self.buf = b""
                    break
                if self.buf[1:2] == b"[":
                    i = 2
                    while i < len(self.buf) and not 0x40 <= self.buf[i] <= 0x7E:
                        i += 1
                    if i >= len(self.buf):
                        if PASTE_START.startswith(self.buf):
                            break  # wait for the rest of the paste opener
                        self.buf = b""
                        break
                    self.buf = self.buf[i + 1 :]
                    continue
                events.append(("key", "esc"))
                self.buf = self.buf[1:]
                continue
            if b in (0x0D, 0x0A):
                events.append(("key", "enter"))
            elif b in (0x7F, 0x08):
                events.append(("key", "backspace"))
            elif b == 0x15:
                events.append(("key", "ctrl-u"))
            elif b == 0x03:
                events.append(("key", "ctrl-c"))
            elif b == 0x04:
                events.append(("key", "ctrl-d"))
            elif b == 0x09 or b >= 0x20:
                # take a run of printable bytes, whole UTF-8 characters only
                i = 0
                while (
                    i < len(self.buf)
                    and (self.buf[i] >= 0x20 or self.buf[i] == 0x09)
                    and self.buf[i] != 0x7F
                ):
                    i += 1
                chunk = self.buf[:i]
                try:
                    text = chunk.decode("utf-8")
                except UnicodeDecodeError as exc:
                    if exc.start == 0:
                        if exc.reason == "unexpected end of data" and i == len(self.buf):
                            break  # a split character: wait for the rest
                        self.buf = self.buf[1:]  # a byte that starts nothing valid: drop it
                        continue
                    text = chunk[: exc.start].decode("utf-8")
                    i = exc.start
                events.append(("text", text))
                self.buf = self.buf[i:]
                continue
            self.buf = self.buf[1:]
        return events


def run(agent: MockAgent, startup: float, raw_log: str = "") -> int:
    fd_in = sys.stdin.fileno()
    old = termios.tcgetattr(fd_in)
    tty.setraw(fd_in)
    screen = b"" if agent.scrollback else b"\x1b[?1049h"
    os.write(agent.out, screen + b"\x1b[?2004h\x1b[?25l\x1b[2J")
    signal.signal(signal.SIGWINCH, lambda *_: setattr(agent, "dirty", True))
    agent.ready_at = time.monotonic() + startup
    keys = KeyReader()
    was_ready = False
    try:
        while True:
            busy = agent.work is not None or time.monotonic() < agent.ready_at
            try:
                r, _, _ = select.select([fd_in], [], [], 0.25 if busy else 1.0)
            except InterruptedError:
                r = []
            if r:
                data = os.read(fd_in, 65536)
                if not data:
                    return 0
                if raw_log:  # every byte as it came off the tty, for tests that need them all
                    with open(raw_log, "ab") as f:
                        f.write(data)
                for kind, value in keys.feed(data):
                    if kind in ("text", "paste"):
                        if agent.permission is not None and kind == "text":
                            agent.answer_permission(value[:1])
                        else:
                            agent.on_text(value, pasted=kind == "paste")
                    elif value == "enter":
                        agent.on_enter()
                    elif value == "backspace":
                        agent.on_backspace()
                    elif value == "ctrl-u":
                        agent.draft, agent.pastes, agent.dirty = "", [], True
                    elif value == "esc":
                        if agent.permission is not None:
                            agent.answer_permission("2")
                        agent.interrupt()
                    elif value == "ctrl-c":
                        if agent.on_ctrl_c():
                            return 0
                    elif value == "ctrl-d" and not agent.draft:
                        return 0
            else:
                agent.tick()
                if busy:
                    agent.frame += 1
                    agent.dirty = True
            ready = time.monotonic() >= agent.ready_at
            if ready != was_ready:
                was_ready, agent.dirty = ready, True
            if agent.dirty:
                os.write(agent.out, agent.render())
    finally:
        os.write(agent.out, b"\x1b[?2004l\x1b[?25h" + (b"" if agent.scrollback else b"\x1b[?1049l"))
        termios.tcsetattr(fd_in, termios.TCSADRAIN, old)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mock-agent", description=__doc__.splitlines()[0])
    p.add_argument("--name", default=os.environ.get("SWARM_AGENT", "mock"))
    p.add_argument("--model", default="mock-1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", type=float, default=6.0, help="mean seconds of work per message")
    p.add_argument("--startup", type=float, default=1.0, help="seconds before input is ready")
    p.add_argument("--permission-rate", type=float, default=0.15)
    p.add_argument("--give-up-rate", type=float, default=0.1)
    p.add_argument("--quiet-rate", type=float, default=0.1)
    p.add_argument(
        "--enter-guard",
        type=float,
        default=0.06,
        help="an Enter this soon after input is a newline (seconds)",
    )
    p.add_argument("--log", default=os.environ.get("SWARM_MOCK_LOG", ""))
    p.add_argument(
        "--give-up-first",
        type=int,
        default=0,
        help="this many turns end with giving up before any finishes",
    )
    p.add_argument(
        "--claims-done", action="store_true", help="run `swarm done` when a turn on a task ends"
    )
    p.add_argument(
        "--raw-log",
        default=os.environ.get("SWARM_MOCK_RAW_LOG", ""),
        help="append every byte read from the terminal to this file",
    )
    p.add_argument(
        "--scrollback",
        action="store_true",
        default=bool(os.environ.get("SWARM_MOCK_SCROLLBACK")),
        help="draw on the normal screen: lines that scroll off go to the "
        "terminal's scrollback (tmux's history), as Claude Code's do",
    )
    p.add_argument(
        "--edits",
        choices=["write", "commit"],
        default="",
        help="each finished turn edits NAME_notes.py in its directory ('commit': and commits it)",
    )
    p.add_argument(
        "--backlog",
        type=int,
        default=0,
        metavar="N",
        help="start with N numbered transcript lines, as a resumed session shows",
    )
    a = p.parse_args(argv)
    agent = MockAgent(
        name=a.name,
        model=a.model,
        rng=random.Random(a.seed),
        work_mean=a.work,
        permission_rate=a.permission_rate,
        give_up_rate=a.give_up_rate,
        quiet_rate=a.quiet_rate,
        enter_guard=a.enter_guard,
        log_path=a.log,
        give_up_first=a.give_up_first,
        claims_done=a.claims_done,
        scrollback=a.scrollback,
        edits=a.edits,
    )
    for i in range(1, a.backlog + 1):
        agent.say(f"  backlog line {i:05d} of {agent.name}")
    return run(agent, a.startup, a.raw_log)


if __name__ == "__main__":
    sys.exit(main())
