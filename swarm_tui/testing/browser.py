"""A real headless Chromium, driven over the DevTools protocol (a websocket, aiohttp): open a
page, read the websocket frames it receives, click and type as a user would."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="swarm-chromium-"))
        self.proc: subprocess.Popen[str] | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.frames = bytearray()  # every websocket frame the page received, in order
        self.http: list[int] = []  # status codes of the page's own responses
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self, width: int = 1400, height: int = 900) -> None:
        exe = chromium()
        assert exe, "chromium is not installed"
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        loop = asyncio.get_running_loop()
        endpoint = ""
        while not endpoint:
            line = await asyncio.wait_for(loop.run_in_executor(None, self.proc.stderr.readline), 30)
            if not line:
                raise AssertionError("chromium exited before it listened")
            if found := _LISTENING.search(line):
                endpoint = found[1]
        port = endpoint.split(":")[2].split("/")[0]
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as resp:
            targets = await resp.json()
        page = next(t for t in targets if t["type"] == "page")
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.call("Network.enable")
        await self.call("Page.enable")

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data:
                future = self._waiting.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                frame = data["params"]["response"]
                payload = frame["payloadData"]
                self.frames += (
                    base64.b64decode(payload) if frame.get("opcode") == 2 else payload.encode()
                )
            elif data.get("method") == "Network.responseReceived":
                self.http.append(int(data["params"]["response"]["status"]))

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.ws is not None
        self._ids += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._ids] = future
        await self.ws.send_str(json.dumps({"id": self._ids, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    async def open(self, url: str) -> None:
        await self.call("Page.navigate", url=url)

    async def text(self) -> str:
        reply = await self.call(
            "Runtime.evaluate", expression="document.body.innerText", returnByValue=True
        )
        return str(reply.get("result", {}).get("value", ""))

    async def click(self, x: int, y: int) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self.call(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )

    async def key(self, key: str, code: str = "", text: str = "", vk: int = 0) -> None:
        extra: dict[str, Any] = {"text": text} if text else {}
        await self.call(
            "Input.dispatchKeyEvent",
            type="keyDown",
            key=key,
            code=code or key,
            windowsVirtualKeyCode=vk,
            **extra,
        )
        await self.call(
            "Input.dispatchKeyEvent",
            type="keyUp",
            key=key,
            code=code or key,
            windowsVirtualKeyCode=vk,
        )

    async def type(self, text: str) -> None:
        for ch in text:
            await self.key(ch, text=ch, vk=ord(ch.upper()) if ch.isalnum() else 0)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)
