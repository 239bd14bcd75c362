"""`swarm serve` in a real browser (headless Chromium, Debian's package): the page needs the
token, renders the fleet's tiles, and a message typed into the page's prompt reaches the
agent."""

from __future__ import annotations

import os
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from swarm_tui.testing import Sandbox, async_wait_until, mock_agent
from swarm_tui.testing.browser import Browser, chromium
from swarm_tui.testing.sandbox import swarm_argv

pytestmark = pytest.mark.integration


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_view_in_a_browser_takes_a_message_to_the_agent(sandbox: Sandbox) -> None:
    if chromium() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (.ci/run installs it)")
        pytest.skip("chromium is not installed")
    layout = sandbox.layout("web", mock_agent("Ada"), mock_agent("Bo"))
    engine = sandbox.start_headless(layout)
    engine.wait_ready()
    port = free_port()
    served = subprocess.Popen(
        [*swarm_argv(), "serve", "web", "--port", str(port)],
        env=sandbox.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    sandbox._procs.append(served)  # type: ignore[arg-type]
    assert served.stdout is not None
    first = served.stdout.readline()
    assert first.startswith("swarm: serving fleet 'web' at http://127.0.0.1:"), first
    url = first.split(" at ", 1)[1].strip()
    assert "?token=" in url

    async def page_answers() -> bool:
        try:
            urllib.request.urlopen(url, timeout=2).read()
        except (urllib.error.URLError, ConnectionError):
            return False
        return True

    await async_wait_until(page_answers, 20, "the server to answer")
    with pytest.raises(urllib.error.HTTPError) as denied:
        urllib.request.urlopen(url.split("?")[0], timeout=5)
    assert denied.value.code == 403

    browser = Browser()
    try:
        await browser.start()
        await browser.open(url)
        await async_wait_until(
            lambda: b"Ada" in browser.frames and b"Bo" in browser.frames,
            60,
            "the page to receive the fleet's tiles",
            lambda: bytes(browser.frames[-2000:]).decode(errors="replace"),
        )
        await async_wait_until(
            lambda: "1 watcher" in sandbox.swarm("ps").stdout,
            10,
            "the browser's view to attach to the engine",
        )
        await browser.click(700, 450)
        await browser.key("i", text="i", vk=73)  # prompt the selected agent (Ada)
        # the prompt's own line, not a word the footer shows too ("m Messages")
        await async_wait_until(
            lambda: b"next target" in browser.frames,
            10,
            "the prompt to open",
            lambda: bytes(browser.frames[-2000:]).decode(errors="replace"),
        )
        await browser.type("hello from the browser")
        await browser.key("Enter", text="\r", vk=13)
        await async_wait_until(
            lambda: sandbox.received("Ada") == ["hello from the browser"],
            30,
            "the message typed in the browser to reach Ada",
            lambda: bytes(browser.frames[-3000:]).decode(errors="replace"),
        )
        await async_wait_until(
            lambda: (
                [(r["sender"], r["recipient"], r["status"]) for r in sandbox.journal("web")]
                == [("human", "Ada", "delivered")]
            ),
            10,
            "the journal to record it, once",
        )
    finally:
        await browser.close()
        served.terminate()
        served.wait(10)
