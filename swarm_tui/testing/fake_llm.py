"""Fake LLM API servers for offline tests of the real agent CLIs.

One HTTP server (stdlib, a thread) speaks enough of three APIs for the CLIs to run:
- Anthropic Messages (`POST /v1/messages`, streaming SSE or JSON; `count_tokens`),
- OpenAI Chat Completions (`POST /v1/chat/completions`) and Responses (`POST /v1/responses`),
- Gemini (`POST /v1beta/models/<model>:streamGenerateContent` and `:generateContent`),
plus `GET /v1/models`. Replies follow a script: each `Reply` says what to answer (text, or a
tool call that makes the CLI ask for permission) and how slowly to stream it, so tests can
hold a CLI in its busy state. Every request is recorded; `user_texts()` returns what the
CLIs sent as user messages, so a test can assert that exactly the injected text arrived.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from swarm_tui.testing.llm_requests import (
    is_side_request,
    is_structured_request,
    last_user_text,
)

__all__ = ["FakeLLM", "Recorded", "Reply", "is_structured_request", "last_user_text"]


@dataclass
class Reply:
    """One scripted answer. `tool` = (name, input) makes it a tool call instead of text."""

    text: str = "Done."
    delay: float = 0.0  # seconds to spread the streamed text over (holds the busy state)
    tool: tuple[str, dict[str, Any]] | None = None
    # Anthropic usage reported for the request; near the model's window, Claude Code shows
    # its context warning ("N% until auto-compact")
    input_tokens: int = 100


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class FakeLLM:
    """Start with `start()`; `base_url` then points at it. Thread-safe script and log."""

    default: Reply = field(default_factory=Reply)
    script: deque[Reply] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    # when set, answers every main request with what it returns for the last user text
    # (after the script is used up): a model whose answer depends on what it was asked
    respond: Callable[[str], str] | None = None
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeLLM:
        fake = self

        class Handler(_Handler):
            llm = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.script and not is_side_request(body):
                return self.script.popleft()
            respond = self.respond
        if respond is not None and not is_side_request(body):
            return Reply(respond(last_user_text(body) or ""))
        return self.default

    def record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(Recorded(path, body, headers))

    def user_texts(self) -> list[str]:
        """The text of the last user message of every main request, in order, deduplicated
        (CLIs resend the whole conversation with each turn)."""
        out: list[str] = []
        with self._lock:
            bodies = [r.body for r in self.requests]
        for body in bodies:
            if is_side_request(body):
                continue
            text = last_user_text(body)
            if text is not None and (not out or out[-1] != text):
                out.append(text)
        return out


def structured_reply(body: dict[str, Any]) -> Reply:
    """A JSON answer with a short string for each required field of the requested schema."""
    schema = body["text"]["format"].get("schema") or {}
    fields = schema.get("required") or list(schema.get("properties") or {})
    return Reply(json.dumps({name: "Fake task" for name in fields}))


class _Handler(BaseHTTPRequestHandler):
    llm: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    # ---------------------------------------------------------------- plumbing
    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            data = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            data = {}
        return data if isinstance(data, dict) else {}

    def _json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, data: Any, event: str | None = None) -> None:
        out = (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"
        self.wfile.write(out.encode())
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if self.path.rstrip("/").endswith("/models"):
            self._json(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": m,
                            "object": "model",
                            "type": "model",
                            "display_name": m,
                            "created_at": "2026-01-01T00:00:00Z",
                            "created": 0,
                            "owned_by": "fake",
                        }
                        for m in ("fake-model", "claude-sonnet-4-5", "gpt-5")
                    ],
                }
            )
        else:
            self._json({"ok": True})

    def do_HEAD(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        path = self.path.split("?")[0]
        self.llm.record(path, body, dict(self.headers))
        if path.endswith("/messages/count_tokens"):
            self._json({"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self._gemini(body, stream=":streamGenerateContent" in path)
        elif path.endswith(":countTokens"):
            self._json({"totalTokens": 100})
        else:
            self._json({"ok": True})

    @staticmethod
    def _pieces(text: str) -> list[str]:
        words = re.findall(r"\S+\s*", text) or [text]
        return words

    def _pace(self, reply: Reply, n: int) -> float:
        return reply.delay / max(1, n)

    # ---------------------------------------------------------------- Anthropic
    def _anthropic(self, body: dict[str, Any]) -> None:
        reply = self.llm.next_reply(body)
        mid = f"msg_{uuid.uuid4().hex[:12]}"
        model = body.get("model", "fake-model")
        usage = {
            "input_tokens": reply.input_tokens,
            "output_tokens": 20,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }
        if not body.get("stream"):
            content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}]
            stop = "end_turn"
            if reply.tool:
                content = [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{uuid.uuid4().hex[:12]}",
                        "name": reply.tool[0],
                        "input": reply.tool[1],
                    }
                ]
                stop = "tool_use"
            self._json(
                {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": usage,
                }
            )
            return
        self._sse_start()
        self._sse(
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
            "message_start",
        )
        if reply.tool:
            name, args = reply.tool
            self._sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": f"toolu_{uuid.uuid4().hex[:12]}",
                        "name": name,
                        "input": {},
                    },
                },
                "content_block_start",
            )
            time.sleep(reply.delay)
            self._sse(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)},
                },
                "content_block_delta",
            )
            stop = "tool_use"
        else:
            self._sse(
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
                "content_block_start",
            )
            pieces = self._pieces(reply.text)
            for piece in pieces:
                time.sleep(self._pace(reply, len(pieces)))
                self._sse(
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                    "content_block_delta",
                )
            stop = "end_turn"
        self._sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self._sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
            "message_delta",
        )
        self._sse({"type": "message_stop"}, "message_stop")

    # ---------------------------------------------------------------- OpenAI chat
    def _chat(self, body: dict[str, Any]) -> None:
        reply = self.llm.next_reply(body)
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        model = body.get("model", "fake-model")
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        tool_calls = None
        if reply.tool:
            tool_calls = [
                {
                    "index": 0,
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": reply.tool[0], "arguments": json.dumps(reply.tool[1])},
                }
            ]
        if not body.get("stream"):
            msg: dict[str, Any] = {
                "role": "assistant",
                "content": None if tool_calls else reply.text,
            }
            if tool_calls:
                msg["tool_calls"] = [
                    {k: v for k, v in t.items() if k != "index"} for t in tool_calls
                ]
            self._json(
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": msg,
                            "finish_reason": "tool_calls" if tool_calls else "stop",
                        }
                    ],
                    "usage": usage,
                }
            )
            return
        self._sse_start()

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            self._sse(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
            )

        chunk({"role": "assistant", "content": ""})
        if tool_calls:
            time.sleep(reply.delay)
            chunk({"tool_calls": tool_calls})
            chunk({}, "tool_calls")
        else:
            pieces = self._pieces(reply.text)
            for piece in pieces:
                time.sleep(self._pace(reply, len(pieces)))
                chunk({"content": piece})
            chunk({}, "stop")
        self._sse(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    # ---------------------------------------------------------------- OpenAI responses
    def _responses(self, body: dict[str, Any]) -> None:
        # a structured-output request (Codex's thread-title call) is a side request: answer
        # with JSON that fits its schema and leave the script to the conversation
        reply = structured_reply(body) if is_structured_request(body) else self.llm.next_reply(body)
        rid = f"resp_{uuid.uuid4().hex[:12]}"
        model = body.get("model", "fake-model")
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 120,
        }
        base = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "in_progress",
            "output": [],
        }
        if reply.tool:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{uuid.uuid4().hex[:12]}",
                "call_id": f"call_{uuid.uuid4().hex[:12]}",
                "name": reply.tool[0],
                "arguments": json.dumps(reply.tool[1]),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:12]}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        if not body.get("stream"):
            self._json({**base, "status": "completed", "output": [item], "usage": usage})
            return
        self._sse_start()
        seq = iter(range(10_000))
        self._sse(
            {"type": "response.created", "sequence_number": next(seq), "response": base},
            "response.created",
        )
        if reply.tool:
            time.sleep(reply.delay)
            self._sse(
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": 0,
                    "item": {**item, "arguments": ""},
                },
                "response.output_item.added",
            )
        else:
            self._sse(
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": 0,
                    "item": {**item, "status": "in_progress", "content": []},
                },
                "response.output_item.added",
            )
            pieces = self._pieces(reply.text)
            for piece in pieces:
                time.sleep(self._pace(reply, len(pieces)))
                self._sse(
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(seq),
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": piece,
                    },
                    "response.output_text.delta",
                )
        self._sse(
            {
                "type": "response.output_item.done",
                "sequence_number": next(seq),
                "output_index": 0,
                "item": item,
            },
            "response.output_item.done",
        )
        self._sse(
            {
                "type": "response.completed",
                "sequence_number": next(seq),
                "response": {**base, "status": "completed", "output": [item], "usage": usage},
            },
            "response.completed",
        )

    # ---------------------------------------------------------------- Gemini
    def _gemini(self, body: dict[str, Any], stream: bool) -> None:
        reply = self.llm.next_reply(body)
        usage = {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}

        def candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
            c: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                c["finishReason"] = finish
            return {"candidates": [c], "usageMetadata": usage, "modelVersion": "fake-model"}

        if reply.tool:
            parts = [{"functionCall": {"name": reply.tool[0], "args": reply.tool[1]}}]
            if not stream:
                self._json(candidate(parts, "STOP"))
                return
            self._sse_start()
            time.sleep(reply.delay)
            self._sse(candidate(parts, "STOP"))
            return
        if not stream:
            self._json(candidate([{"text": reply.text}], "STOP"))
            return
        self._sse_start()
        pieces = self._pieces(reply.text)
        for i, piece in enumerate(pieces):
            time.sleep(self._pace(reply, len(pieces)))
            self._sse(candidate([{"text": piece}], "STOP" if i == len(pieces) - 1 else None))


def main() -> None:
    """Run a fake server by hand: `python -m swarm_tui.testing.fake_llm [--delay S]`."""
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("--delay", type=float, default=2.0)
    p.add_argument("--text", default="Done: I looked at it.")
    a = p.parse_args()
    fake = FakeLLM(default=Reply(a.text, a.delay)).start()
    print(fake.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        fake.stop()


if __name__ == "__main__":
    main()
