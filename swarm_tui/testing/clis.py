"""The real agent CLIs, pinned, installed on demand for tests into the checkout's `.venv`.

npm packages go to `.venv/agents/` (one `npm install --prefix`), aider to its own venv
`.venv/aider/` (its dependencies must not meet ours). A file lock keeps parallel test runs
from installing twice. `cli_path(name)` returns the executable, or None with the reason in
`why_missing(name)` when it cannot be installed here (no npm, no network to the registry).
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / ".venv" / "agents"
AIDER_VENV = ROOT / ".venv" / "aider"

# name -> (package@version, executable); versions are the ones the adapters were tested with
NPM: dict[str, tuple[str, str]] = {
    "claude": ("@anthropic-ai/claude-code@2.1.332", "claude"),
    "codex": ("@openai/codex@0.171.0", "codex"),
    "gemini": ("@google/gemini-cli@0.61.0", "gemini"),
    "opencode": ("opencode-ai@1.18.33", "opencode"),
    "copilot": ("@github/copilot@1.0.102", "copilot"),
}
PYPI: dict[str, tuple[str, str]] = {"aider": ("aider-chat==0.86.2", "aider")}

_why: dict[str, str] = {}


def version_of(name: str) -> str:
    spec = (NPM.get(name) or PYPI[name])[0]
    return spec.rsplit("@", 1)[-1] if name in NPM else spec.split("==")[-1]


def _locked_install(tag: str, install: list[str]) -> str:
    AGENTS.parent.mkdir(parents=True, exist_ok=True)
    with open(AGENTS.parent / f".install-{tag}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(install, capture_output=True, text=True, timeout=1800)
        return "" if r.returncode == 0 else (r.stderr or r.stdout).strip().splitlines()[-1:][0]


def cli_path(name: str) -> Path | None:
    """The CLI's executable, installing it first if needed; None if that is impossible."""
    if name in NPM:
        spec, exe = NPM[name]
        path = AGENTS / "node_modules" / ".bin" / exe
        if not path.exists():
            if shutil.which("npm") is None:
                _why[name] = "npm is not installed"
                return None
            err = _locked_install(
                "npm",
                [
                    "npm",
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                    str(AGENTS),
                    spec,
                ],
            )
            if not path.exists():
                _why[name] = f"npm install {spec} failed: {err}"
                return None
        return path
    spec, exe = PYPI[name]
    path = AIDER_VENV / "bin" / exe
    if not path.exists():
        if not (AIDER_VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(AIDER_VENV)], check=True)
        err = _locked_install(
            "pip",
            [
                str(AIDER_VENV / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                spec,
            ],
        )
        if not path.exists():
            _why[name] = f"pip install {spec} failed: {err}"
            return None
    return path


def why_missing(name: str) -> str:
    return _why.get(name, "")


def install_all() -> int:
    """Install every pinned CLI now (the test command does this before pytest starts)."""
    missing = []
    for name in [*NPM, *PYPI]:
        path = cli_path(name)
        print(
            f"swarm: {name} {version_of(name)}: "
            + (str(path) if path else f"not installed ({why_missing(name)})"),
            flush=True,
        )
        if path is None:
            missing.append(name)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(install_all())


def require_cli(name: str) -> Path:
    """For tests of a real CLI: its executable, else skip with the reason — except in CI
    (CI=true), where a CLI that cannot be installed fails the test."""
    import os

    import pytest

    path = cli_path(name)
    if path is None:
        reason = f"REAL {name.upper()} CLI NOT TESTED: {why_missing(name)}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path
