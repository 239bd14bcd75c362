"""Requests to the engine: one JSON object per line, validated before anything is done.

A request names its operation in `op`; `token` is an agent's SWARM_TOKEN (what counts where
the kernel cannot say who asks); `expires` is when its sender stops waiting (a local request
that reaches the engine later is refused, so a client that reported a timeout is never
carried out afterwards).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

MAX_REQUEST = 4 * 1024 * 1024  # bytes of one request line, as encoded on the socket
MAX_DEPTH = 32  # nesting of a request's JSON


class _Req(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    token: str | None = None
    expires: float | None = None  # the client stops waiting then: later, nothing is done


class Ping(_Req):
    op: Literal["ping"]


class Ls(_Req):
    op: Literal["ls"]


class Send(_Req):
    op: Literal["send"]
    to: list[str] = Field(default_factory=list)
    all: bool = False
    role: str | None = None
    text: str = ""
    skill: str = ""
    params: dict[str, str] = Field(default_factory=dict)
    wait: float = Field(0.0, ge=0, le=600)


class Focus(_Req):
    op: Literal["focus"]
    agent: str | None = None  # None: the sender itself
    label: str


class Hook(_Req):
    op: Literal["hook"]
    cli: str
    payload: dict[str, Any]


class Fresh(_Req):
    op: Literal["fresh"]
    agent: str
    handoff: bool = True


class AddTask(_Req):
    op: Literal["task"]
    agent: str
    spec: str
    verify: str = ""
    judge: str = ""
    judge_command: str = ""
    review_on_idle: bool = True
    max_rounds: int = Field(5, ge=1, le=100)


class Done(_Req):
    op: Literal["done"]
    note: str = ""


class Judge(_Req):
    op: Literal["judge"]
    agent: str


class Tasks(_Req):
    op: Literal["tasks"]


class Remind(_Req):
    op: Literal["remind"]
    action: Literal["list", "add", "pause", "resume", "snooze", "fire", "rm", "edit"]
    id: int = 0
    spec: dict[str, str] = Field(default_factory=dict)
    minutes: float = 10
    text: str = ""


class Skills(_Req):
    op: Literal["skills"]
    show: str = ""


class Save(_Req):
    op: Literal["save"]
    name: str
    force: bool = False


class Down(_Req):
    op: Literal["down"]


class Stop(_Req):
    op: Literal["stop"]


class Messages(_Req):
    op: Literal["messages"]
    limit: int = Field(50, ge=1, le=10000)


class SaveTarget(_Req):
    op: Literal["save-target"]
    name: str


class AttachArgv(_Req):
    op: Literal["attach-argv"]
    agent: str


MAX_HISTORY_LINES = 10_000  # lines of an agent's history one request reads
MAX_GREP_CONTEXT = 20  # lines of context either side of a match


class History(_Req):
    """An agent's tmux history, oldest line first, the lines on its screen last."""

    op: Literal["history"]
    agent: str
    lines: int = Field(MAX_HISTORY_LINES, ge=1, le=MAX_HISTORY_LINES)


class Grep(_Req):
    """A Python `re` pattern searched in every agent's history (or one agent's)."""

    op: Literal["grep"]
    pattern: str = Field(min_length=1, max_length=1000)
    agent: str | None = None
    context: int = Field(0, ge=0, le=MAX_GREP_CONTEXT)
    ignore_case: bool = False


class Diff(_Req):
    """An agent's change in its worktree against its base."""

    op: Literal["diff"]
    agent: str
    stat: bool = False  # the files and counts only, no patches


class Merge(_Req):
    """Merge an agent's branch into its base (or `into`): refused on conflicts, a dirty base
    checkout, or a task not complete (unless `force`)."""

    op: Literal["merge"]
    agent: str
    into: str = ""
    squash: bool = False
    force: bool = False
    check: bool = False  # say what a merge would do (or why not), change nothing


class Answer(_Req):
    """Answer an agent's permission dialog, as a human: "yes", "no" or an option's number.
    `question` and `options` are the dialog the human saw: one that asks something else
    now, or offers other options, is not answered (None: whatever it asks)."""

    op: Literal["answer"]
    agent: str
    choice: str = Field(pattern=r"^(?:yes|no|[1-9])$")
    question: str | None = None
    options: list[tuple[str, str]] | None = Field(None, max_length=99)


AnyRequest = (
    Ping
    | Ls
    | Send
    | Focus
    | Messages
    | Down
    | Stop
    | Hook
    | Fresh
    | AddTask
    | Done
    | Judge
    | Tasks
    | Remind
    | Skills
    | Save
    | SaveTarget
    | AttachArgv
    | Answer
    | History
    | Grep
    | Diff
    | Merge
)
_requests: TypeAdapter[AnyRequest] = TypeAdapter(Annotated[AnyRequest, Field(discriminator="op")])


def validate_request(data: Any) -> AnyRequest:
    return _requests.validate_python(data)


def depth(data: Any) -> int:
    """How deeply a parsed JSON value nests (iteratively: a hostile one cannot recurse us)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                items = value.values() if isinstance(value, dict) else value
                stack.extend((v, level + 1) for v in items)
    return deepest


def parse_request(line: bytes) -> Any:
    """A request line as JSON, refused in one line when too large or too deep."""
    if len(line) > MAX_REQUEST:
        raise ValueError(f"the request is over {MAX_REQUEST} bytes")
    try:
        data = json.loads(line)
    except RecursionError:
        raise ValueError(f"the request nests deeper than {MAX_DEPTH} levels") from None
    if depth(data) > MAX_DEPTH:
        raise ValueError(f"the request nests deeper than {MAX_DEPTH} levels")
    return data
