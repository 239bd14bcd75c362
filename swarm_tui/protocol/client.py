"""A watcher's side of the wire: a mirror of the fleet (`FleetView`) kept current from the
engine's event stream, and one-shot requests for everything a watcher does to the fleet.

The UI builds on this alone; it never imports the engine. If the engine goes away the view
keeps its last picture, the listener hears `disconnected`, and `connect()` may be called
again (the engine, restarted, answers with a fresh snapshot).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from swarm_tui.protocol.models import (
    HEARTBEAT,
    OPEN_TASK,
    VERSION,
    AgentChanged,
    AgentView,
    Alive,
    DiffView,
    Ended,
    GrepView,
    HistoryView,
    HostChanged,
    HostView,
    LayoutChanged,
    LayoutInvalid,
    MessageChanged,
    MessageView,
    Notice,
    ScreenChanged,
    SkillView,
    Snapshot,
    TaskView,
    VerdictView,
    Work,
    WorkChanged,
    decode,
)

LINE_LIMIT = 16 * 1024 * 1024  # a snapshot of a large fleet is one line
REQUEST_TIMEOUT = 30.0
SILENT_AFTER = 4 * HEARTBEAT  # seconds without a line from an engine that sends heartbeats


class Refused(Exception):
    """The engine answered a request with an error (its one line is the message)."""


class Unreachable(Exception):
    """No engine answers on the socket."""


class ViewListener(Protocol):
    def agent_changed(self, name: str) -> None: ...

    def screen_changed(self, name: str) -> None: ...

    def host_changed(self, name: str) -> None: ...

    def message_changed(self, message: MessageView) -> None: ...

    def work_changed(self) -> None: ...

    def notice(self, text: str) -> None: ...

    def layout_changed(self) -> None: ...

    def layout_invalid(self, problems: list[str], partly: bool) -> None: ...

    def ended(self, reason: str, deliberate: bool) -> None: ...

    def disconnected(self, reason: str) -> None: ...


class NullViewListener:
    def agent_changed(self, name: str) -> None:
        pass

    def screen_changed(self, name: str) -> None:
        pass

    def host_changed(self, name: str) -> None:
        pass

    def message_changed(self, message: MessageView) -> None:
        pass

    def work_changed(self) -> None:
        pass

    def notice(self, text: str) -> None:
        pass

    def layout_changed(self) -> None:
        pass

    def layout_invalid(self, problems: list[str], partly: bool) -> None:
        pass

    def ended(self, reason: str, deliberate: bool) -> None:
        pass

    def disconnected(self, reason: str) -> None:
        pass


class FleetView:
    """What a watcher knows of the fleet: agents in tile order, their last screens, hosts,
    tasks, verdicts and reminders."""

    def __init__(self, snapshot: Snapshot):
        self.screens: dict[str, list[str]] = {}
        self.ended: Ended | None = None
        self.load(snapshot)

    def load(self, snapshot: Snapshot) -> None:
        self.fleet = snapshot.fleet
        self.layout_path = Path(snapshot.layout_path)
        self.engine_pid = snapshot.engine_pid
        self.agents: dict[str, AgentView] = {a.name: a for a in snapshot.agents}
        self.hosts: dict[str, HostView] = {h.name: h for h in snapshot.hosts}
        self.set_work(snapshot.work)
        self.messages: list[MessageView] = list(snapshot.messages)
        self.layout_problems = list(snapshot.layout_problems)
        self.layout_partly = snapshot.layout_partly
        self.notify = snapshot.notify  # what rings here, as the layout's [notify] says
        for gone in set(self.screens) - set(self.agents):
            del self.screens[gone]

    def note_message(self, message: MessageView) -> None:
        """Keep the recent messages current (a new one, or a new status of one we have)."""
        for i, known in enumerate(self.messages):
            if known.id == message.id:
                self.messages[i] = message
                return
        self.messages = [*self.messages, message][-200:]

    def set_work(self, work: Work) -> None:
        self.work = work
        self._work_at = time.monotonic()

    # ------------------------------------------------------------------ queries
    def tasks_of(self, agent: str) -> list[TaskView]:
        """An agent's tasks in queue order."""
        return sorted((t for t in self.work.tasks if t.agent == agent), key=lambda t: t.position)

    def current_task(self, agent: str) -> TaskView | None:
        return next((t for t in self.tasks_of(agent) if t.status in OPEN_TASK), None)

    def verdicts_of(self, task: int) -> list[VerdictView]:
        return [v for v in self.work.verdicts if v.task == task]

    def countdown(self, agent: str) -> float | None:
        """Seconds until the agent's next reminder, as of now."""
        left = self.work.countdowns.get(agent)
        if left is None:
            return None
        return max(0.0, left - (time.monotonic() - self._work_at))

    def oldest_open(self) -> dict[str, float]:
        return {
            a.name: a.oldest_queued for a in self.agents.values() if a.oldest_queued is not None
        }

    def host_of(self, agent: str) -> HostView | None:
        view = self.agents.get(agent)
        return self.hosts.get(view.host) if view is not None else None

    def judge_name(self) -> str | None:
        return next((a.name for a in self.agents.values() if a.role == "judge"), None)


class FleetClient:
    """One watcher's connection to a fleet's engine."""

    def __init__(self, socket: Path, listener: ViewListener | None = None):
        self.socket = socket
        self.listener: ViewListener = listener or NullViewListener()
        self.view: FleetView | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._visible: set[str] = set()
        self._sizes: dict[str, tuple[int, int]] = {}
        self._heard_at = 0.0  # when the stream last brought a line (monotonic)
        self._silent = False  # the stream was ended for silence
        self._silence: asyncio.TimerHandle | None = None  # looks for a silent engine

    # ------------------------------------------------------------------ the stream
    async def connect(self, visible: Iterable[str] = ()) -> FleetView:
        """Open the stream: the snapshot first (returned, and kept in `view`), then events."""
        self._visible = set(visible)
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.socket), limit=LINE_LIMIT)
        except OSError as exc:
            raise Unreachable(
                f"no swarm engine answers on {self.socket} ({exc.strerror or exc})"
            ) from None
        try:
            writer.write(
                json.dumps(
                    {"op": "watch", "version": VERSION, "visible": sorted(self._visible)}
                ).encode()
                + b"\n"
            )
            await writer.drain()
            first = await asyncio.wait_for(reader.readline(), REQUEST_TIMEOUT)
            reply = json.loads(first) if first else None
            if isinstance(reply, dict) and reply.get("ok") is False:
                raise Refused(str(reply.get("error")))
            snapshot = decode(first) if first else None
        except TimeoutError:
            writer.close()
            raise Unreachable(
                f"the swarm engine on {self.socket} did not answer in {REQUEST_TIMEOUT:g} s"
            ) from None
        except (OSError, ValueError) as exc:  # ValidationError is a ValueError
            writer.close()
            raise Unreachable(f"the swarm engine on {self.socket} did not answer ({exc})") from None
        except Refused:
            writer.close()
            raise
        if not isinstance(snapshot, Snapshot):
            writer.close()
            raise Unreachable(f"the swarm engine on {self.socket} hung up")
        if self.view is None:
            self.view = FleetView(snapshot)
        else:
            self.view.load(snapshot)
            self.view.ended = None
        self._writer = writer
        self._reader_task = asyncio.create_task(self._read(reader), name="fleet-watch")
        if self._sizes:  # a new engine (or the same one, back) hears the tiles' sizes again
            self._send_visible()
        return self.view

    def _check_silence(self, writer: asyncio.StreamWriter) -> None:
        """An engine that sends heartbeats and has sent nothing for SILENT_AFTER is stopped
        or cut off: end the stream, so the view says so and connects again."""
        if writer is not self._writer:
            return
        if time.monotonic() - self._heard_at > SILENT_AFTER:
            self._silent = True
            writer.close()  # the reader sees the stream end
            return
        self._silence = asyncio.get_running_loop().call_later(
            HEARTBEAT, self._check_silence, writer
        )

    async def _read(self, reader: asyncio.StreamReader) -> None:
        why = "the engine closed the connection"
        self._silent = False
        if self._silence is not None:  # a watch of an earlier stream
            self._silence.cancel()
            self._silence = None
        try:
            while line := await reader.readline():
                self._heard_at = time.monotonic()
                try:
                    event = decode(line)
                    if isinstance(event, Alive):
                        if self._silence is None and self._writer is not None:
                            self._check_silence(self._writer)  # this engine says it lives
                        continue
                    self._apply(event)
                except ValidationError:
                    continue  # an event this version does not know
                except Exception as exc:  # noqa: BLE001 - a listener's fault is not the stream's
                    self.listener.notice(f"the view failed on an event ({exc!r}); it goes on")
        except (OSError, ValueError) as exc:
            why = f"the connection to the engine broke ({exc})"
        if self._silent:
            why = f"the engine has sent nothing for {SILENT_AFTER:g} s (is it running?)"
        if self._silence is not None:
            self._silence.cancel()
            self._silence = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.listener.disconnected(why)

    def _apply(self, event: Any) -> None:
        view, out = self.view, self.listener
        assert view is not None
        if isinstance(event, ScreenChanged):
            view.screens[event.name] = event.lines
            out.screen_changed(event.name)
        elif isinstance(event, AgentChanged):
            if event.agent.name in view.agents:
                view.agents[event.agent.name] = event.agent
                out.agent_changed(event.agent.name)
        elif isinstance(event, HostChanged):
            view.hosts[event.host.name] = event.host
            out.host_changed(event.host.name)
        elif isinstance(event, MessageChanged):
            view.note_message(event.message)
            out.message_changed(event.message)
        elif isinstance(event, WorkChanged):
            view.set_work(event.work)
            out.work_changed()
        elif isinstance(event, Notice):
            out.notice(event.text)
        elif isinstance(event, LayoutChanged):
            view.load(event.snapshot)
            out.layout_changed()
        elif isinstance(event, LayoutInvalid):
            view.layout_problems, view.layout_partly = event.problems, event.partly
            out.layout_invalid(event.problems, event.partly)
        elif isinstance(event, Ended):
            view.ended = event
            out.ended(event.reason, event.deliberate)

    def set_visible(
        self, names: Iterable[str], sizes: Mapping[str, tuple[int, int]] | None = None
    ) -> None:
        """The agents this watcher shows: their screens come to it, at the fast rate; with
        `sizes` (columns, rows of each one's tile) their windows are made that size."""
        names = set(names)
        new_sizes = self._sizes if sizes is None else dict(sizes)
        if names == self._visible and new_sizes == self._sizes:
            return
        self._visible, self._sizes = names, new_sizes
        self._send_visible()

    def _send_visible(self) -> None:
        if self._writer is not None:
            line: dict[str, Any] = {"op": "visible", "names": sorted(self._visible)}
            if self._sizes:
                line["sizes"] = {n: list(s) for n, s in self._sizes.items()}
            self._writer.write(json.dumps(line).encode() + b"\n")

    @property
    def connected(self) -> bool:
        return self._writer is not None

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._reader_task is not None:
            self._reader_task.cancel()
            self._reader_task = None

    # ------------------------------------------------------------------ requests
    async def request(
        self, payload: dict[str, Any], timeout: float = REQUEST_TIMEOUT
    ) -> dict[str, Any]:
        """One request on its own connection; the engine's answer, or `Refused` with its
        one line, or `Unreachable`."""
        payload = {**payload, "expires": time.time() + timeout}
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.socket), limit=LINE_LIMIT)
        except OSError as exc:
            raise Unreachable(
                f"no swarm engine answers on {self.socket} ({exc.strerror or exc})"
            ) from None
        try:
            writer.write(json.dumps(payload, ensure_ascii=False).encode() + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), timeout + 5)
        except (OSError, TimeoutError) as exc:
            raise Unreachable(f"the swarm engine did not answer ({exc})") from None
        except ValueError:  # the stream's limit: readline gives up on a longer line
            raise Unreachable(
                f"the swarm engine's answer to {payload.get('op')!r} is over "
                f"{LINE_LIMIT / 2**20:g} MB, more than this view takes; it was "
                "dropped"
            ) from None
        finally:
            writer.close()
        if not line:
            raise Unreachable("the swarm engine hung up before answering")
        try:
            reply: dict[str, Any] = json.loads(line)
        except ValueError as exc:
            raise Unreachable(f"the swarm engine's answer is not JSON ({exc})") from None
        if not isinstance(reply, dict):
            raise Unreachable("the swarm engine's answer is not a JSON object")
        if not reply.get("ok"):
            raise Refused(str(reply.get("error", "refused")))
        return reply

    async def send(
        self, names: list[str], text: str, skill: str = "", params: dict[str, str] | None = None
    ) -> list[MessageView]:
        reply = await self.request(
            {"op": "send", "to": names, "text": text, "skill": skill, "params": params or {}}
        )
        return [
            MessageView(
                id=m["id"],
                created=0,
                sender=str(reply.get("from", "human")),
                recipient=m["to"],
                text=text,
                status=m["status"],
                updated=0,
                detail=m.get("detail", ""),
            )
            for m in reply["messages"]
        ]

    async def set_focus(self, name: str, label: str) -> None:
        await self.request({"op": "focus", "agent": name, "label": label})

    async def fresh(self, name: str, handoff: bool = True) -> None:
        await self.request({"op": "fresh", "agent": name, "handoff": handoff})

    async def add_task(self, name: str, spec: str, verify: str = "") -> int:
        reply = await self.request({"op": "task", "agent": name, "spec": spec, "verify": verify})
        return int(reply["task"])

    async def review(self, name: str) -> None:
        await self.request({"op": "judge", "agent": name})

    async def remind(
        self, action: str, rid: int = 0, text: str = "", minutes: float = 10
    ) -> dict[str, Any]:
        return await self.request(
            {"op": "remind", "action": action, "id": rid, "text": text, "minutes": minutes}
        )

    async def save(self, name: str, force: bool = False) -> str:
        reply = await self.request({"op": "save", "name": name, "force": force})
        return str(reply["path"])

    async def save_target(self, name: str) -> tuple[str, bool]:
        """Where `save(name)` would write, and whether a file is there already."""
        reply = await self.request({"op": "save-target", "name": name})
        return str(reply["path"]), bool(reply["exists"])

    async def messages(self, limit: int = 200) -> list[MessageView]:
        reply = await self.request({"op": "messages", "limit": limit})
        return [MessageView.model_validate(m) for m in reply["messages"]]

    async def skills(self) -> dict[str, SkillView]:
        """The engine's skills by name (read from its files at each call: edits are live)."""
        reply = await self.request({"op": "skills"})
        found = [SkillView.model_validate(s) for s in reply["skills"]]
        return {s.name: s for s in found}

    async def answer(
        self,
        name: str,
        choice: str,
        question: str | None = None,
        options: Iterable[tuple[str, str]] | None = None,
    ) -> dict[str, Any]:
        """Answer the agent's permission dialog: "yes", "no" or an option's number. With
        `question` and `options` (the dialog the human saw), a dialog that now asks
        something else, or offers other options, is left alone. The reply says which
        option was picked and the agent's state after."""
        payload: dict[str, Any] = {"op": "answer", "agent": name, "choice": choice}
        if question is not None:
            payload["question"] = question
        if options is not None:
            payload["options"] = [list(o) for o in options]
        return await self.request(payload)

    async def attach_argv(self, name: str) -> list[str]:
        reply = await self.request({"op": "attach-argv", "agent": name})
        return [str(w) for w in reply["argv"]]

    async def history(self, name: str, lines: int = 10_000) -> HistoryView:
        """The agent's tmux history as it is now, oldest line first (its screen last)."""
        reply = await self.request({"op": "history", "agent": name, "lines": lines})
        return HistoryView.model_validate(reply)

    async def diff(self, name: str) -> DiffView:
        """The agent's change in its worktree against its base, read now."""
        reply = await self.request({"op": "diff", "agent": name}, timeout=60)
        return DiffView.model_validate(reply["diff"])

    async def merge(
        self,
        name: str,
        into: str = "",
        squash: bool = False,
        force: bool = False,
        check: bool = False,
    ) -> str:
        """Merge the agent's branch into its base (or `into`); returns what was done, in
        one line (with `check`: what a merge would do, nothing changed). Refused (raises)
        on conflicts, a dirty base checkout or an open task."""
        reply = await self.request(
            {
                "op": "merge",
                "agent": name,
                "into": into,
                "squash": squash,
                "force": force,
                "check": check,
            },
            timeout=120,
        )
        return str(reply["done"])

    async def grep(
        self, pattern: str, agent: str | None = None, context: int = 0, ignore_case: bool = False
    ) -> GrepView:
        """A Python `re` pattern searched in every agent's history (or `agent`'s)."""
        reply = await self.request(
            {
                "op": "grep",
                "pattern": pattern,
                "agent": agent,
                "context": context,
                "ignore_case": ignore_case,
            },
            timeout=60,
        )
        return GrepView.model_validate(reply)
