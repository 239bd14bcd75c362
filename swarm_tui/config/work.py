"""Tasks and reminders as a layout states them."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DURATION = re.compile(r"^(?:\d+(?:\.\d+)?\s*[smhd]\s*)+$")  # 45s, 10m, 1h30m, 2d
PART = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
TIME_OF_DAY = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
MIN_PERIOD = 10.0  # seconds: a reminder firing more often would flood its agents


def seconds(text: str, minimum: float = 0.0) -> float:
    """'90s', '30m', '2h' or '1d' as seconds. A bare number is refused (is '20' seconds or
    minutes?), and so is anything shorter than `minimum` seconds."""
    t = text.strip()
    if NUMBER.match(t):
        raise ValueError(
            f'{text!r} has no unit: write "{t}m" for minutes or "{t}s" for seconds (units: s, m, h)'
        )
    if not DURATION.match(t):
        raise ValueError(f"{text!r} is not a duration such as 45s, 30m, 2h (units: s, m, h)")
    size = dict(UNITS)
    value = sum(float(n) * size[u] for n, u in PART.findall(t))
    if value < minimum:
        raise ValueError(f'{text!r} is too short: at least {minimum:g}s (e.g. "30s", "10m")')
    return value


def format_duration(secs: float) -> str:
    """A duration as people read it, and as `seconds` reads it back: the largest unit and
    the next one when not zero (45s, 1m30s, 10m, 1h30m, 2h, 1d4h). Negative reads as 0s;
    fractions of a second are dropped."""
    left = max(0, int(secs))
    for i, (unit, size) in enumerate(UNITS):
        if left >= size or unit == "s":
            big, rest = divmod(left, size)
            text = f"{big}{unit}"
            if i + 1 < len(UNITS):
                small_unit, small_size = UNITS[i + 1]
                if rest // small_size:
                    text += f"{rest // small_size}{small_unit}"
            return text
    raise AssertionError("unreachable: the last unit takes any duration")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TaskSpec(_Strict):
    """One task for one agent, checked by a judge that is not the agent itself."""

    spec: str = Field("", description="What done means, in words.")
    spec_file: str = Field("", description="A file holding the spec (relative to the layout).")
    verify: str = Field(
        "",
        description="A command run in the agent's directory on its host; "
        "non-zero exit means not done (tests, a build, a metric threshold).",
    )
    verify_timeout: float = Field(600, gt=0, description="Seconds the verify command may run.")
    judge: str = Field(
        "",
        description="The judge agent's name (default: the fleet's first agent with role 'judge').",
    )
    judge_command: str = Field(
        "",
        description="A headless judge instead: a command that "
        "reads the review prompt on stdin, e.g. 'claude -p'.",
    )
    max_rounds: int = Field(5, ge=1, le=100, description="Reviews before a human is asked.")
    max_minutes: float = Field(240, gt=0, description="Wall time before a human is asked.")
    review_on_idle: bool = Field(
        True, description="Review when a turn ends with the task open, not only on `swarm done`."
    )
    journal_id: int = Field(
        0,
        ge=0,
        description="Written by `swarm save`: the task's id in "
        "the fleet's journal. Loading the layout again for a fleet whose "
        "journal still holds this task (same agent, same spec) does not "
        "add it twice.",
    )

    @model_validator(mode="after")
    def _has_spec(self) -> TaskSpec:
        if not self.spec and not self.spec_file:
            raise ValueError("a task needs `spec` or `spec_file`")
        return self


class ReminderSpec(_Strict):
    """A timer that types a reminder into agents when their input is ready."""

    to: str = Field("all", description="An agent's name, 'role:NAME' or 'all'.")
    every: str = Field("", description="Period with a unit (s, m, h), at least 10s, e.g. '30m'.")
    idle: str = Field(
        "",
        description="Fire when the agent has been idle this long (a unit, "
        "at least 10s), e.g. '10m' (the stall watchdog).",
    )
    at: str = Field("", description="Time of day, 'HH:MM', local time.")
    text: str = Field("", description="Literal text; {agent}, {focus}, {task} are filled in.")
    skill: str = Field("", description="A skill's name (skills/NAME.md) instead of text.")
    action: Literal["message", "fresh"] = Field(
        "message",
        description="'fresh': a scheduled fresh start (handoff note, new "
        "conversation, re-inject) instead of a message.",
    )

    @field_validator("every", "idle")
    @classmethod
    def _duration(cls, v: str) -> str:
        if v:
            seconds(v, MIN_PERIOD)
        return v

    @field_validator("at")
    @classmethod
    def _at(cls, v: str) -> str:
        if v and not TIME_OF_DAY.match(v):
            raise ValueError("must be HH:MM (24-hour)")
        return v

    @model_validator(mode="after")
    def _one_each(self) -> ReminderSpec:
        if sum(bool(x) for x in (self.every, self.idle, self.at)) != 1:
            raise ValueError("give exactly one of `every`, `idle`, `at`")
        if self.action == "message" and bool(self.text) == bool(self.skill):
            raise ValueError("give exactly one of `text`, `skill`")
        return self
