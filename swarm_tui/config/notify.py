"""`[notify]` in a layout: who hears when an agent needs a human — the engine (a webhook,
`notify-send`; it runs with no view attached overnight) and the view (the terminal's bell and
a desktop notification) — and the rules both follow: what a stall is, what an alert says,
and how alerts coalesce. One definition, so the engine and every view say the same."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swarm_tui.config.work import format_duration, seconds

Kind = Literal["permission", "verdict", "stall", "exited", "host"]
KINDS: tuple[Kind, ...] = ("permission", "verdict", "stall", "exited", "host")
MIN_STALL = 10.0  # seconds: a shorter stall would alert on every pause for thought
_KIND_HELP = (
    "permission (an agent waits on a prompt), verdict (the judge ruled on a task), "
    "stall (an agent with an open task idle, or working with no output, for "
    "`stall_after`), exited (an agent's CLI ended), host (a node's link went down)"
)


class NotifySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    webhook: str = Field(
        "",
        description='URL that gets a JSON POST per alert ({"text", '
        '"message", "title", "fleet", "kind", "subject"}: '
        "Slack- and ntfy-style receivers take it); empty: none.",
    )
    desktop: bool = Field(
        True,
        description="`notify-send` on the engine's machine, where "
        "it is installed and a desktop session is there.",
    )
    kinds: list[Kind] = Field(
        default_factory=lambda: list(KINDS),
        description="What the engine sends (webhook, notify-send): " + _KIND_HELP + ".",
    )
    bell: list[Kind] = Field(
        default_factory=lambda: list(KINDS),
        description="What rings in the view (the terminal's bell and an "
        "OSC 9 / OSC 777 desktop notification): the same kinds.",
    )
    every: float = Field(
        60.0,
        ge=1,
        description="Seconds: at most one alert per agent (or "
        "host) and kind in this window; what else came in it is said in one "
        'alert at the window\'s end ("3 more: …").',
    )
    stall_after: str = Field(
        "20m",
        description="An agent with an open task stalls when it "
        "has been idle this long, or working this long with no new "
        "output (a unit: s, m, h; at least 10s).",
    )

    @field_validator("webhook")
    @classmethod
    def _url(cls, v: str) -> str:
        if v and not v.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return v

    @field_validator("stall_after")
    @classmethod
    def _duration(cls, v: str) -> str:
        seconds(v, MIN_STALL)
        return v

    @property
    def stall_seconds(self) -> float:
        return seconds(self.stall_after, MIN_STALL)


def headline(spec: str) -> str:
    """A task's first line: what alerts call it."""
    return next((ln.strip() for ln in spec.splitlines() if ln.strip()), "")[:100]


def stall_reason(
    state: str, idle_for: float, silent_for: float, spec: str | None, after: float
) -> str:
    """Why an agent counts as stalled ("" when it does not): it has an open task (`spec`)
    and has been idle for `after` seconds, or working with no new output for that long.
    Waiting on a prompt, exited or unreachable agents have alerts of their own."""
    if spec is None:
        return ""
    task = headline(spec)
    if state == "idle" and idle_for >= after:
        return f"idle for {format_duration(idle_for)} with its task open: {task}"
    if state == "working" and silent_for >= after:
        return f"working with no output for {format_duration(silent_for)} on: {task}"
    return ""


def stall_text(agent: str, reason: str) -> str:
    return f"{agent} stalled: {reason}"


def verdict_text(
    agent: str, task: int, spec: str, verdict: str, judge: str, reasons: str = ""
) -> str:
    """What an alert says of a verdict: whose task, which, what the judge said and why."""
    what = {"complete": "is complete", "incomplete": "is incomplete"}.get(verdict)
    said = f"{what} ({judge})" if what else f"got no verdict from {judge}"
    why = f" — {reasons}" if reasons and verdict != "complete" else ""
    return f"{agent}'s task #{task} {said}: {headline(spec)}{why}"


@dataclass
class _Window:
    opened: float
    held: int = 0  # alerts that came inside the window, not sent yet
    last: str = ""  # the latest of them


class Coalescer:
    """One alert per subject (an agent, a host) and kind per window of `every` seconds. What
    comes inside a window is held, and one trailing alert at the window's end says how many
    and the latest ("3 more: …"), so the last word is never swallowed; that trailing alert
    opens the next window. The clock is passed in, so tests move time themselves."""

    def __init__(self, clock: Callable[[], float]):
        self._clock = clock
        self._windows: dict[tuple[str, Kind], _Window] = {}

    def offer(self, subject: str, kind: Kind, text: str, every: float) -> str | None:
        """The text to send now, or None: held for the window's trailing alert."""
        now = self._clock()
        window = self._windows.get((subject, kind))
        if window is not None and now - window.opened < every:
            window.held += 1
            window.last = text
            return None
        if window is not None and window.held:  # its end passed unreleased: say it all now
            text = f"{window.held + 1} more: {text}"
        self._windows[(subject, kind)] = _Window(now)
        return text

    def due(self, every: float) -> list[tuple[str, Kind, str]]:
        """(subject, kind, text) of each trailing alert whose window has ended."""
        now = self._clock()
        out: list[tuple[str, Kind, str]] = []
        for key, window in list(self._windows.items()):
            if now - window.opened < every:
                continue
            if window.held:
                out.append((key[0], key[1], f"{window.held} more: {window.last}"))
                self._windows[key] = _Window(now)
            else:
                del self._windows[key]  # a quiet window ends; the next alert goes at once
        return out
