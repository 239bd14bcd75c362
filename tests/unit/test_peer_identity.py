"""The kernel's word on who is at the other end of the socket."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from swarm_tui.config.layout import parse_layout
from swarm_tui.errors import ConfigError
from swarm_tui.fleet.identity import ancestors, peer_pid


def test_ancestors_walk_up_to_init() -> None:
    chain = ancestors(os.getpid())
    assert chain[:2] == [os.getpid(), os.getppid()]
    assert 1 not in chain


def test_a_command_name_with_spaces_and_parentheses(tmp_path: Path) -> None:
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "stat").write_text("42 (my (odd) prog) S 7 42 42 0 -1")
    (tmp_path / "7").mkdir()
    (tmp_path / "7" / "stat").write_text("7 (sh) S 1 7 7 0 -1")
    assert ancestors(42, proc=tmp_path) == [42, 7]


def test_the_peer_of_a_socket_pair_is_this_process() -> None:
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        assert peer_pid(a) == os.getpid()
    finally:
        a.close()
        b.close()
    assert peer_pid(None) is None


def test_may_names_only_known_permissions() -> None:
    ok = parse_layout(
        Path("m.toml"),
        '[defaults]\nmay = ["tasks"]\n[[agents]]\nname = "Ada"\n'
        '[[agents]]\nname = "Bo"\nmay = ["down", "focus"]\n',
    )
    assert [a.may for a in ok.agents()] == [("tasks",), ("down", "focus")]
    with pytest.raises(ConfigError, match="may"):
        parse_layout(Path("m.toml"), '[[agents]]\nname = "Ada"\nmay = ["everything"]\n')
