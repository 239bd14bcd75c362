"""`[notify]` in a layout: who hears from the engine when an agent needs a human (it runs with
no view attached overnight)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Kind = Literal["permission", "exited", "host"]
KINDS: tuple[Kind, ...] = ("permission", "exited", "host")


class NotifySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    webhook: str = Field("", description="URL that gets a JSON POST per alert ({\"text\", "
                         "\"message\", \"title\", \"fleet\", \"kind\", \"subject\"}: "
                         "Slack- and ntfy-style receivers take it); empty: none.")
    desktop: bool = Field(True, description="`notify-send` on the engine's machine, where "
                          "it is installed and a desktop session is there.")
    kinds: list[Kind] = Field(default_factory=lambda: list(KINDS),
                              description="What alerts: permission (an agent waits on a "
                              "prompt), exited (an agent's CLI ended), host (a node's link "
                              "went down).")
    every: float = Field(60.0, ge=1, description="Seconds: at most one alert per agent (or "
                         "host) and kind in this window.")

    @field_validator("webhook")
    @classmethod
    def _url(cls, v: str) -> str:
        if v and not v.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return v
