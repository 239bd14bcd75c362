"""What a CLI sent to a fake LLM API (testing/fake_llm.py), read the same way for the three
request shapes (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini): the last
text a human typed, with the CLI's own wrappers removed, and which requests are the CLI's
background calls rather than a turn."""

from __future__ import annotations

import json
import re
from typing import Any


def is_side_request(body: dict[str, Any]) -> bool:
    """Title generation, topic detection and other background calls some CLIs make."""
    if body.get("max_tokens") == 1 or is_structured_request(body):
        return True
    found = body.get("messages")
    messages: list[Any] = found if isinstance(found, list) else []
    for msg in messages[:1]:  # chat clients put the system prompt first
        if (
            isinstance(msg, dict)
            and msg.get("role") == "system"
            and re.search(r"title generator", json.dumps(msg.get("content", "")), re.I)
        ):
            return True
    system = json.dumps(body.get("system", "")) + json.dumps(body.get("instructions", ""))
    return (
        bool(re.search(r"title|topic|summar(y|ize) this conversation|quota", system, re.I))
        and "stream" not in body
    )


_REMINDER = re.compile(
    r"<system-reminder>.*?</system-reminder>|"
    r"^\s*<current_datetime>.*?</current_datetime>\s*",
    re.S,
)
# Claude Code sends a long paste (shown as `[Pasted text #N +M lines]`) wrapped in these tags
_PASTED = re.compile(r'<pasted_content id="([^"]*)">\n(.*?)\n</pasted_content id="\1">', re.S)
# ... and records a local command (`/clear`) it ran as context for the next user message
_LOCAL_COMMAND = re.compile(
    r"<(local-command-caveat|command-name|command-message|command-args|"
    r"local-command-stdout|local-command-stderr)>.*?</\1>",
    re.S,
)


def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") in ("text", "input_text") and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif "text" in part and isinstance(part["text"], str) and "type" not in part:
                parts.append(part["text"])  # gemini parts
        return "\n".join(parts) if parts else None
    return None


def last_user_text(body: dict[str, Any]) -> str | None:
    """The last user message's text in any of the three request shapes, CLI wrappers removed
    (Claude Code's <system-reminder> blocks)."""
    messages = body.get("messages") or body.get("input") or body.get("contents") or []
    if isinstance(messages, str):
        return messages
    for msg in reversed(messages):
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        if isinstance(msg.get("content"), list) and any(
            isinstance(p, dict) and p.get("type") == "tool_result" for p in msg["content"]
        ):
            continue  # a tool result, not something a human typed
        text = _text_of(msg.get("content", msg.get("parts")))
        if text is None:
            continue
        text = _LOCAL_COMMAND.sub("", _REMINDER.sub("", text))
        text = _PASTED.sub(lambda m: m.group(2), text).strip()
        if text:
            return text
    return None


def is_structured_request(body: dict[str, Any]) -> bool:
    """A Responses request that asks for JSON output (Codex titles a new thread this way)."""
    text = body.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    return isinstance(fmt, dict) and fmt.get("type") == "json_schema"
