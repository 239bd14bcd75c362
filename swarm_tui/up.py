"""Bringing a fleet up: the engine (in this process with `--headless`, else in the
background) and the view that watches it.

`swarm up` starts the engine as a process of its own unless it runs (daemon.py), then opens
the view over the fleet's socket; `swarm up --headless` is the engine itself: hosts, agents,
journal, socket, until Ctrl-C, `swarm stop` or the fleet's end.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from swarm_tui import daemon, paths
from swarm_tui.errors import SwarmError


def up(layout_arg: str, headless: bool, fresh: bool = False, log: str | None = None) -> int:
    from swarm_tui.config.layout import load_layout, resolve_layout
    from swarm_tui.errors import ConfigError, FleetBusy
    from swarm_tui.fleet.lock import FleetLock
    from swarm_tui.fleet.store import Store
    from swarm_tui.hosts.local import check_tmux

    loaded = load_layout(resolve_layout(layout_arg))
    check_tmux()
    if not headless:
        return _up_and_watch(loaded, fresh)
    if log:
        daemon.log_to(Path(log))
    lock = FleetLock(paths.lock_path(loaded.fleet), loaded.fleet)
    try:
        lock.acquire()
    except FleetBusy as exc:
        if not fresh:
            raise
        raise FleetBusy(
            f"--fresh: fleet {loaded.fleet!r} is running (swarm pid "
            f"{owner_pid(loaded.fleet)}) and its journal is in use: stop it "
            "first (quit its UI, or `swarm down` it), then start it with --fresh"
        ) from exc
    kept = paths.set_aside_journal(loaded.fleet) if fresh else None
    new_journal = not paths.db_path(loaded.fleet).exists()
    try:
        store = Store(paths.db_path(loaded.fleet))
    except BaseException:
        lock.release()
        raise
    if kept is not None:
        _keep_tokens(kept, store)
        print(
            f"swarm: fleet {loaded.fleet!r} starts from a clean journal; the old one is kept "
            f"as {kept}",
            flush=True,
        )
    try:
        return asyncio.run(_run_fleet(loaded, store, Path(log) if log else None))
    except ConfigError:
        if new_journal:  # refused before anything started: no journal of a fleet never run
            store.close()
            for suffix in paths.JOURNAL_FILES:
                Path(f"{paths.db_path(loaded.fleet)}{suffix}").unlink(missing_ok=True)
        raise
    finally:
        store.close()
        lock.release()


def owner_pid(fleet: str) -> str:
    try:
        return paths.lock_path(fleet).read_text().strip() or "?"
    except OSError:
        return "?"


def _keep_tokens(kept: Path, store: Any) -> None:
    """Agents still running from before keep their identity: their SWARM_TOKEN is carried
    into the clean journal (tokens only, no focus, messages or tasks)."""
    import sqlite3

    try:
        old = sqlite3.connect(f"file:{kept}?mode=ro", uri=True)
        try:
            rows = old.execute("SELECT name, token FROM agents").fetchall()
        finally:
            old.close()
    except sqlite3.Error:
        return  # unreadable: the agents get new tokens when they are next started
    for name, token in rows:
        store.db.execute("INSERT OR IGNORE INTO agents(name, token) VALUES (?, ?)", (name, token))


async def _run_fleet(loaded: Any, store: Any, log: Path | None) -> int:
    """The engine: hosts, agents, journal, socket; until Ctrl-C, `swarm stop` or the end."""
    from swarm_tui.fleet.engine import Fleet
    from swarm_tui.fleet.events import Tee
    from swarm_tui.fleet.headless import LogListener, StartProgress
    from swarm_tui.fleet.server import FleetServer
    from swarm_tui.hosts.slurm import probe

    loaded = await _allocated(loaded)
    fleet = Fleet(loaded, store, lease_probe=probe)
    fleet.listener = StartProgress(sys.stderr, list(fleet.links))
    server = FleetServer(fleet, paths.socket_path(fleet.name))
    keep = asyncio.create_task(daemon.keep_log(log)) if log else None
    try:
        await server.start()  # before the hosts: their agents' clients reach it at once
        await fleet.start()
        fleet.watch()  # live reload of the layout file
        fleet.listener = Tee(LogListener(sys.stdout), server.watchers)
        attached = len(fleet.agents) - len(fleet.created)
        if log:  # started by `swarm up` in the background
            print(
                f"swarm: engine of fleet {fleet.name!r} running in the background (pid "
                f"{os.getpid()}) with {len(fleet.agents)} agents (re-attached {attached}); "
                f"`swarm stop {fleet.name}` stops it, agents keep running",
                flush=True,
            )
        else:
            print(
                f"swarm: fleet {fleet.name!r} running headless with {len(fleet.agents)} "
                f"agents (re-attached {attached}); Ctrl-C stops watching, agents keep "
                "running",
                flush=True,
            )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        await asyncio.wait(
            [
                asyncio.create_task(stop.wait()),
                asyncio.create_task(server.stop_requested.wait()),
                asyncio.create_task(fleet.ended.wait()),
            ],
            return_when=asyncio.FIRST_COMPLETED,
        )
        if fleet.ended.is_set():
            print(f"swarm: {fleet.end_reason}", flush=True)
        elif server.stop_requested.is_set():
            print("swarm: stopped by `swarm stop`; agents keep running", flush=True)
    finally:
        if keep is not None:
            keep.cancel()
        await server.stop()
        await fleet.stop()
    return 1 if fleet.ended.is_set() and not fleet.deliberate_end else 0


async def _allocated(loaded: Any) -> Any:
    """The layout with its Slurm entries' nodes (hosts/slurm.py); a stop signal while a
    holder job waits ends the start, and the job is cancelled."""
    from swarm_tui.hosts.slurm import allocate

    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    assert me is not None
    signals = (signal.SIGTERM, signal.SIGHUP)
    for sig in signals:
        loop.add_signal_handler(sig, me.cancel)
    try:
        return await allocate(loaded, lambda line: print(f"swarm: {line}", flush=True))
    except asyncio.CancelledError:
        raise SwarmError(
            "start-up interrupted while waiting for Slurm: the job swarm submitted is cancelled"
        ) from None
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def _up_and_watch(loaded: Any, fresh: bool) -> int:
    """`swarm up` with a UI: the engine in the background (started unless it runs), then
    this terminal watches it."""
    from swarm_tui.errors import FleetBusy

    sock = paths.socket_path(loaded.fleet)
    if daemon.ping(sock) is None:
        code = daemon.start(loaded.path, loaded.fleet, fresh)
        if code:
            return code
    elif fresh:
        raise FleetBusy(
            f"--fresh: fleet {loaded.fleet!r} is running (swarm pid "
            f"{owner_pid(loaded.fleet)}): stop it first (`swarm stop "
            f"{loaded.fleet}`), then start it with --fresh"
        )
    return watch(sock)


def watch(sock: Path | None, tunnel: Any = None) -> int:
    """The view, attached to the engine on `sock` (or at the end of an SSH `tunnel`)."""
    from swarm_tui.protocol.client import FleetClient, Refused, Unreachable
    from swarm_tui.ui.app import SwarmApp

    async def run() -> str | None:
        try:  # a tunnel that fails to open still removes what it made
            path = await tunnel.open() if tunnel is not None else sock
            assert isinstance(path, Path)
            client = FleetClient(path)
            try:
                try:
                    await client.connect()
                except (Unreachable, Refused) as exc:
                    raise SwarmError(str(exc)) from None
                note: str | None = await SwarmApp(
                    client, _starter(client.view) if tunnel is None else None
                ).run_async()
            finally:
                await client.close()
        finally:
            if tunnel is not None:
                await tunnel.close()
        return note

    note = asyncio.run(run())
    if note:
        print(f"swarm: {note}")
    return 0


def _starter(view: Any) -> Any:
    """What the view's `U` runs (in a thread) when its engine is gone: start it again."""
    import io

    def start() -> None:
        code = daemon.start(view.layout_path, view.fleet, False, out=io.StringIO())
        if code:
            raise SwarmError(f"exit {code}; see `swarm logs {view.fleet}`")

    return start
