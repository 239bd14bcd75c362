"""The engine is UI-free: importing it (or the CLI, or the socket server) never loads textual,
and no module outside swarm_tui/ui imports textual at all."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "swarm_tui"
UI = PACKAGE / "ui"

PROBE = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] == "textual")
print(json.dumps({"textual": loaded, "ok": [n for n in sys.argv[1:] if n in sys.modules]}))
"""


def import_in_fresh_interpreter(*modules: str) -> dict[str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *modules],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PACKAGE.parent,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, list[str]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def non_ui_modules() -> list[Path]:
    return sorted(
        p for p in PACKAGE.rglob("*.py") if UI not in p.parents and p.name != "__main__.py"
    )


def test_engine_cli_and_server_do_not_load_textual() -> None:
    result = import_in_fresh_interpreter(
        "swarm_tui.fleet.engine", "swarm_tui.cli", "swarm_tui.fleet.server"
    )
    assert result["ok"] == ["swarm_tui.fleet.engine", "swarm_tui.cli", "swarm_tui.fleet.server"]
    assert result["textual"] == []


def test_probe_does_see_textual_when_the_ui_is_imported() -> None:
    # guards the test above: the probe would notice textual if something pulled it in
    result = import_in_fresh_interpreter("swarm_tui.ui.app")
    assert "textual" in result["textual"]


def test_every_non_ui_module_imports_without_textual() -> None:
    modules = [module_name(p) for p in non_ui_modules()]
    assert "swarm_tui.fleet.engine" in modules and "swarm_tui.tmux.protocol" in modules
    result = import_in_fresh_interpreter(*modules)
    assert result["textual"] == []


def imported_names(tree: ast.AST) -> list[tuple[int, str]]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append((node.lineno, node.module))
    return names


def test_no_module_outside_ui_imports_textual() -> None:
    offenders = []
    for path in non_ui_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for lineno, name in imported_names(tree):
            if name.split(".")[0] == "textual":
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{lineno}: {name}")
    assert offenders == []


def test_no_module_outside_ui_imports_the_ui_at_module_level() -> None:
    # the CLI may import the app inside the function that runs it, never at import time
    offenders = []
    for path in non_ui_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                for lineno, name in imported_names(node):
                    if name == "swarm_tui.ui" or name.startswith("swarm_tui.ui."):
                        offenders.append(f"{path.relative_to(PACKAGE.parent)}:{lineno}")
    assert offenders == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("import textual", True),
        ("from textual.app import App", True),
        ("def f():\n    import textual.widgets", True),
        ("import textualize_other", False),
        ("from . import textual", False),
    ],
)
def test_scanner_finds_textual_imports(source: str, found: bool) -> None:
    names = [n for _, n in imported_names(ast.parse(source))]
    assert any(n.split(".")[0] == "textual" for n in names) is found


LIGHT = """
import sys
from swarm_tui import cli
cli.parse(["send", "Bob", "hi"])
heavy = ("asyncio", "pydantic", "textual", "libtmux", "asyncssh", "sqlite3")
print(" ".join(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""


def test_the_cli_starts_without_the_engines_libraries() -> None:
    """`swarm send` and `ls` run in every agent's pane, often, and on a busy machine: their
    start is the stdlib client and argparse, not asyncio or pydantic (0.25 s -> 0.1 s)."""
    proc = subprocess.run(
        [sys.executable, "-c", LIGHT],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PACKAGE.parent,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"`swarm send` imports {proc.stdout.strip()}"
