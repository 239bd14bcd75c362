"""The fleet's Unix socket: how `swarm send`, `ls`, `focus` and the watchers (UIs) reach the
running engine.

One JSON object per line each way (the requests are in swarm_tui/protocol/requests.py). A
sender is who the kernel (or, from a node, its relay) says it is, never what it claims. The
socket is 0600 in a 0700 directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from swarm_tui.errors import SwarmError
from swarm_tui.fleet.admission import Admission, RateLimitedLog, accept_batch
from swarm_tui.fleet.agent import Agent
from swarm_tui.fleet.answer import Answers
from swarm_tui.fleet.engine import Fleet
from swarm_tui.fleet.history import Readers
from swarm_tui.fleet.identity import peer_pid
from swarm_tui.fleet.readonly import messages_reply, reminders_list, skills_reply, tasks_reply
from swarm_tui.fleet.store import OPEN, NewTask
from swarm_tui.fleet.watchers import Watchers
from swarm_tui.fleet.worktrees import merge_refusal
from swarm_tui.protocol.models import VERSION
from swarm_tui.protocol.requests import (
    MAX_REQUEST,
    AddTask,
    Answer,
    AttachArgv,
    Diff,
    Done,
    Down,
    Focus,
    Fresh,
    Grep,
    History,
    Hook,
    Judge,
    Ls,
    Merge,
    Messages,
    Ping,
    Remind,
    Save,
    SaveTarget,
    Send,
    Skills,
    Stop,
    Tasks,
    parse_request,
    validate_request,
)

REQUEST_WAIT = 10.0  # seconds a client has to send its request line: idle ones are dropped


def _is_watch(line: bytes) -> bool:
    try:
        data = parse_request(line)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("op") == "watch"


def tile_sizes(raw: object) -> dict[str, tuple[int, int]] | None:
    """A watcher's `sizes` ({name: [columns, rows]}); None when it sent none. Sizes beyond
    any terminal are left out."""
    if not isinstance(raw, dict):
        return None
    return {
        str(name): (int(size[0]), int(size[1]))
        for name, size in raw.items()
        if isinstance(size, list)
        and len(size) == 2
        and all(isinstance(v, int) and 0 < v <= 1000 for v in size)
    }


class FleetServer:
    def __init__(self, fleet: Fleet, path: Path):
        self.fleet = fleet
        self.path = path
        self._server: asyncio.AbstractServer | None = None
        self.admission = Admission()  # who may hold a connection
        self.watchers = Watchers(fleet)
        self.answers = Answers(fleet)  # permission dialogs answered for a human
        self.readers = Readers()  # history and grep: a few at once
        self.stop_requested = asyncio.Event()  # `swarm stop`: the engine goes, agents stay
        self._handlers: set[asyncio.Task[object]] = set()  # connections being served
        self._ended: asyncio.Task[None] | None = None

    async def start(self) -> None:
        for link in self.fleet.links.values():  # a node's relay hands its requests here
            link.host.requests = self.node_request
        loop = asyncio.get_running_loop()
        if loop.get_exception_handler() is None:
            loop.set_exception_handler(RateLimitedLog(lambda t: self.fleet.listener.notice(t)))
        self._ended = asyncio.create_task(self._tell_end(), name="server-end")
        if self.path.exists():
            self.path.unlink()
        old = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(
                self._client, path=str(self.path), limit=MAX_REQUEST, backlog=accept_batch()
            )
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)

    async def _tell_end(self) -> None:
        await self.fleet.ended.wait()
        self.watchers.end(self.fleet.end_reason, self.fleet.deliberate_end)

    async def stop(self) -> None:
        await self.watchers.close()
        if self._ended is not None:
            self._ended.cancel()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._handlers):  # connections still open end with the engine
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = peer_pid(writer.get_extra_info("socket")) or 0
        crowded = self.admission.admit(peer)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            if crowded:  # said and closed at once: no descriptor held
                writer.write(json.dumps({"ok": False, "error": crowded}).encode() + b"\n")
                return
            if task is not None:
                self.admission.asking(task, writer, peer)
            try:  # a connection that never asks must not hold a descriptor for good
                line = await asyncio.wait_for(reader.readline(), REQUEST_WAIT)
            except TimeoutError:
                return
            except (ValueError, asyncio.LimitOverrunError):
                line = None  # longer than the limit: answered as such below
            finally:
                if task is not None:
                    self.admission.asked(task)
            if line is not None and b'"watch"' in line[:200] and _is_watch(line):
                await self._watch(line, reader, writer)
                return
            reply = await self.answer(line, peer or None)
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        except (OSError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # the engine is stopping (see stop), or it gave way to make room
        finally:
            self.admission.left(peer)
            if task is not None:
                self._handlers.discard(task)
            writer.close()

    async def _watch(
        self, line: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """A watcher: the snapshot, then the event stream, until it hangs up. It may say
        which agents it shows at any time (`{"op": "visible", "names": [...]}`)."""
        try:
            request = parse_request(line)
            version = int(request.get("version", 0))
            visible = {str(n) for n in request.get("visible", [])}
        except (ValueError, TypeError, AttributeError) as exc:
            writer.write(json.dumps({"ok": False, "error": f"bad request: {exc}"}).encode() + b"\n")
            return
        if version != VERSION:
            writer.write(
                json.dumps(
                    {
                        "ok": False,
                        "error": (
                            f"this UI speaks protocol version {version} and the engine "
                            f"(pid {os.getpid()}) version {VERSION}: run the same swarm for "
                            "both (restart the engine with `swarm stop` then `swarm up`, or "
                            "reinstall)"
                        ),
                    }
                ).encode()
                + b"\n"
            )
            return
        watcher = self.watchers.add(writer, visible)
        try:
            while line := await reader.readline():
                try:
                    data = parse_request(line)
                    if data.get("op") == "visible":
                        self.watchers.set_visible(
                            watcher, {str(n) for n in data["names"]}, tile_sizes(data.get("sizes"))
                        )
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # a watcher's bad line changes nothing
        except (OSError, ValueError, asyncio.LimitOverrunError):
            pass
        finally:
            watcher.drop()
            await asyncio.gather(watcher.task, return_exceptions=True)

    async def answer(
        self, line: bytes | None, peer: int | None = None, node: tuple[str, str] | None = None
    ) -> dict[str, Any]:
        """The answer to one request line (None: it was too long), whatever went wrong."""
        try:
            if line is None:
                raise ValueError(f"the request is over {MAX_REQUEST} bytes")
            return await self.handle(parse_request(line), peer, node)
        except SwarmError as exc:
            return {"ok": False, "error": str(exc)}
        except (ValueError, ValidationError) as exc:
            return {"ok": False, "error": f"bad request: {str(exc).splitlines()[0]}"}
        except sqlite3.Error as exc:  # a full disk, a read-only journal
            self.fleet.listener.notice(f"the journal cannot be written: {exc}")
            return {
                "ok": False,
                "error": f"the journal ({self.fleet.store.path}) cannot be "
                f"written ({exc}): nothing was recorded or sent; free space and try again",
            }

    async def node_request(self, line: bytes, host: str, agent: str) -> dict[str, Any]:
        """A request from a remote node's relay: `agent` is who the node's kernel says sent
        it ("" when the process is in no agent's pane)."""
        return await self.answer(line, None, (host, agent))

    async def handle(
        self, data: Any, peer: int | None = None, node: tuple[str, str] | None = None
    ) -> dict[str, Any]:
        req = validate_request(data)
        if peer is not None and req.expires is not None and time.time() > req.expires:
            raise SwarmError(
                "the request reached swarm after its sender stopped waiting: nothing was done"
            )
        fleet = self.fleet
        # an answer is typed for a human only: one whose sender cannot be told is refused
        sender = await fleet.sender_for(req.token, peer, node, proven=isinstance(req, Answer))
        if isinstance(req, Ping):
            return {
                "ok": True,
                "fleet": fleet.name,
                "pid": os.getpid(),
                "you": sender,
                "ready": fleet.ready,
                "started": fleet.started_at,
                "agents": len(fleet.agents),
                "watchers": self.watchers.count(),
                "layout": str(fleet.loaded.path),
            }
        if isinstance(req, Stop):
            self._may(sender, "stop", None, "stop the engine")
            self.stop_requested.set()
            return {"ok": True}
        if isinstance(req, Ls):
            return {
                "ok": True,
                "fleet": fleet.name,
                "agents": [a.summary() for a in fleet.agents.values()],
            }
        if isinstance(req, Send):
            if req.all or req.role:
                targets = [
                    a.name
                    for a in fleet.resolve([], req.all, req.role, exclude=sender)
                    if self._talks(sender, a)
                ]
                if not targets:
                    raise SwarmError(
                        f"{sender} may message none of them: the layout's "
                        "talks_to for it does not list them"
                    )
            elif req.to:
                targets = req.to
                for agent in fleet.resolve(targets):
                    if not self._talks(sender, agent):
                        raise SwarmError(
                            f"{sender} may not message {agent.name}: its talks_to lists only "
                            f"{', '.join(self._talks_to(sender) or ())}; nothing was sent"
                        )
            else:
                raise SwarmError("no recipient: name an agent, or use --all or --role ROLE")
            if req.skill:
                messages = self._send_skill(targets, req, sender)
            else:
                messages = fleet.send(targets, req.text, sender=sender)
            ids = [m.id for m in messages]
            if req.wait:
                await self._wait_delivered(ids, req.wait)
            rows = [fleet.store.message(i) for i in ids]
            return {
                "ok": True,
                "from": sender,
                "messages": [
                    {"id": m.id, "to": m.recipient, "status": m.status, "detail": m.detail}
                    for m in rows
                    if m is not None
                ],
            }
        if isinstance(req, Hook):
            if sender == "human":
                raise SwarmError("swarm hook runs inside an agent's pane (it needs SWARM_TOKEN)")
            state = fleet.hook(sender, req.payload)
            return {"ok": True, "agent": sender, "state": state}
        if isinstance(req, AddTask):
            self._may(sender, "tasks", req.agent, "give another agent a task")
            tid = fleet.tasks.add(
                req.agent,
                NewTask(
                    spec=req.spec,
                    verify=req.verify,
                    judge=req.judge,
                    judge_command=req.judge_command,
                    review_on_idle=req.review_on_idle,
                    max_rounds=req.max_rounds,
                ),
                origin=f"cli:{sender}",
            )
            return {"ok": True, "task": tid}
        if isinstance(req, Done):
            if sender == "human":
                raise SwarmError(
                    "swarm done runs in the agent's own pane (it needs the "
                    "agent's SWARM_TOKEN); a human can run `swarm judge NAME`"
                )
            task = fleet.tasks.done(sender, req.note)
            return {"ok": True, "agent": sender, "task": task.id}
        if isinstance(req, Judge):
            return {"ok": True, "task": fleet.tasks.review(req.agent)}
        if isinstance(req, Tasks):
            return tasks_reply(fleet.store)
        if isinstance(req, Remind):
            return {"ok": True, **self._remind(req)}
        if isinstance(req, Save):
            from swarm_tui.fleet.save import save_layout

            return {"ok": True, "path": str(save_layout(fleet, req.name, req.force))}
        if isinstance(req, Skills):
            return skills_reply(req.show)
        if isinstance(req, Fresh):
            agent = fleet.fresh(req.agent, req.handoff)
            return {"ok": True, "agent": agent.name}
        if isinstance(req, Down):
            self._may(sender, "down", None, "stop the fleet")
            fleet.end(f"fleet {fleet.name!r} stopped by `swarm down`")
            return {"ok": True}
        if isinstance(req, Focus):
            name = req.agent or (sender if sender != "human" else None)
            if name is None:
                raise SwarmError("focus: name the agent (or run it from an agent's pane)")
            self._may(sender, "focus", name, "set another agent's focus")
            agent = fleet.set_focus(name, req.label, by=sender)
            return {"ok": True, "agent": agent.name, "focus": agent.focus}
        if isinstance(req, SaveTarget):
            from swarm_tui.fleet.save import save_folder

            path = save_folder(fleet) / f"{req.name}.toml"
            return {"ok": True, "path": str(path), "exists": path.exists()}
        if isinstance(req, Answer):
            return await self.answers.answer(
                req.agent, req.choice, req.question, sender, req.options
            )
        if isinstance(req, AttachArgv):
            (agent,) = fleet.resolve([req.agent])
            return {"ok": True, "argv": fleet.attach_argv(agent.name)}
        if isinstance(req, Diff):
            (agent,) = fleet.resolve([req.agent])
            if sender != "human" and agent.name != sender and not self._talks(sender, agent):
                raise SwarmError(f"{sender} may not read {agent.name}'s diff (talks_to)")
            view = await fleet.worktrees.read(agent, patches=not req.stat)
            return {"ok": True, "diff": view.model_dump()}
        if isinstance(req, Merge):
            self._may(sender, "merge", None, "merge an agent's branch")
            (agent,) = fleet.resolve([req.agent])
            refusal = "" if req.force else merge_refusal(agent.name, fleet.store.tasks(agent.name))
            if refusal:  # and what forcing it would do: merge nothing, leave files behind
                try:
                    forced = await fleet.worktrees.merge(
                        agent, req.into, req.squash, force=True, check=True
                    )
                except SwarmError as exc:
                    forced = f"refused too: {exc}"
                raise SwarmError(f"{refusal} (forced, it {forced})")
            done = await fleet.worktrees.merge(agent, req.into, req.squash, req.force, req.check)
            if not req.check:
                fleet.listener.notice(f"{agent.name}: {done}")
            return {"ok": True, "done": done}
        if isinstance(req, History | Grep):  # who may read what: see fleet/history.py
            return await self.readers.answer(
                fleet, req, lambda agent: agent.name == sender or self._talks(sender, agent)
            )
        assert isinstance(req, Messages)
        return messages_reply(fleet.store, req.limit)

    def _may(self, sender: str, what: str, target: str | None, doing: str) -> None:
        """Refuse an agent what the layout does not grant it (`may`): the human may do
        anything, an agent its own affairs."""
        if sender == "human":
            return
        if target is not None and target.casefold() == sender.casefold():
            return
        agent = self.fleet.agents.get(sender)
        if agent is None or what not in agent.spec.may:
            raise SwarmError(
                f"{sender} may not {doing}: the layout grants it with "
                f'may = ["{what}"] on the agent or its defaults; or ask the human'
            )

    def _talks_to(self, sender: str) -> tuple[str, ...] | None:
        agent = self.fleet.agents.get(sender)
        return None if agent is None else agent.spec.talks_to

    def _talks(self, sender: str, to: Agent) -> bool:
        """Whether `sender` may message `to` (the layout's `talks_to`; the human and swarm
        message anyone)."""
        allowed = self._talks_to(sender)
        return allowed is None or to.name.casefold() in allowed or to.role.casefold() in allowed

    def _send_skill(self, targets: list[str], req: Send, sender: str) -> list[Any]:
        """A skill rendered for each recipient (its own name, focus and task)."""
        from swarm_tui.config.skills import find_skill

        skill = find_skill(req.skill)
        out = []
        for agent in self.fleet.resolve(targets):
            task = self.fleet.tasks.current(agent.name)
            values = {
                "agent": agent.name,
                "focus": agent.focus or "(none)",
                "task": task.spec if task else agent.focus or "(none)",
                **req.params,
            }
            text = skill.render(values)
            if req.text:
                text += "\n\n" + req.text
            out += self.fleet.send([agent.name], text, sender=sender)
        return out

    def _remind(self, req: Remind) -> dict[str, Any]:
        from swarm_tui.config.work import ReminderSpec

        rem = self.fleet.reminders
        if req.action == "add":
            try:
                spec = ReminderSpec.model_validate(req.spec)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "reminder"
                raise SwarmError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None
            return {"id": rem.add(spec)}
        if req.action in ("pause", "resume"):
            rem.pause(req.id, req.action == "pause")
        elif req.action == "snooze":
            rem.snooze(req.id, req.minutes * 60)
        elif req.action == "fire":
            return {"fired": rem.fire_now(req.id)}
        elif req.action == "rm":
            rem.remove(req.id)
        elif req.action == "edit":
            rem.edit(req.id, req.text)
        return {"reminders": reminders_list(self.fleet.store)}

    async def _wait_delivered(self, ids: list[int], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rows = [self.fleet.store.message(i) for i in ids]
            if all(r is not None and r.status not in OPEN for r in rows):
                return
            await asyncio.sleep(0.05)
