"""`swarm serve`: the same view in a browser (textual-serve), one view process per page.

It binds 127.0.0.1 unless told otherwise and asks for a secret token: the URL it prints
carries it (`?token=...`); the page then keeps it in an HttpOnly, same-site cookie for its
scripts and its websocket. Anything without the token gets 403. From another machine the way
in is an SSH tunnel to the head node (`ssh -L PORT:127.0.0.1:PORT HEAD`).
"""

from __future__ import annotations

import hmac
import logging
import secrets
import shlex
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web
from textual_serve.server import Server

COOKIE = "swarm_token"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class GuardedServer(Server):
    """textual-serve's server, behind a token."""

    def __init__(self, command: str, host: str, port: int, title: str, token: str):
        super().__init__(command, host=host, port=port, title=title)
        self.token = token

    def initialize_logging(self) -> None:
        """Warnings only: an access log would print the token with every request."""
        logging.basicConfig(level=logging.WARNING, format="swarm serve: %(message)s")

    async def on_startup(self, app: web.Application) -> None:
        pass  # textual-serve's banner names the URL without its token: ours is printed

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.query.get("token") or request.cookies.get(COOKIE, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            raise web.HTTPForbidden(
                text="swarm: this page needs the token that `swarm "
                "serve` printed (open the URL it gave)\n"
            )
        response = await handler(request)
        if "token" in request.query and not response.prepared:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response


def serve(fleet: str, host: str, port: int) -> int:
    token = secrets.token_urlsafe(24)
    command = shlex.join([sys.executable, "-m", "swarm_tui.cli", "ui", fleet])
    server = GuardedServer(command, host, port, f"swarm · {fleet}", token)
    where = "127.0.0.1" if host in ("127.0.0.1", "localhost") else host
    print(f"swarm: serving fleet {fleet!r} at http://{where}:{port}/?token={token}", flush=True)
    if where == "127.0.0.1":
        print(
            f"swarm: from another machine: ssh -L {port}:127.0.0.1:{port} THIS-HOST, then "
            "open the same URL there",
            flush=True,
        )
    print("swarm: Ctrl-C stops serving (the engine goes on)", flush=True)
    server.serve()
    return 0
