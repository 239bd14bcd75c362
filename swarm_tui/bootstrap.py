"""Create the checkout's virtual environment on first use and re-run inside it.

Stdlib only: this runs under whatever `python3` the user has, before any dependency exists.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
STAMP = VENV / ".swarm-installed"


def _venv_python() -> Path:
    return VENV / "bin" / "python"


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> Path:
    """Make `.venv` with swarm and its test tools installed; return its python."""
    if sys.version_info < (3, 11):  # noqa: UP036 - runs under any python3, says what it needs
        sys.exit(f"swarm: needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    py = _venv_python()
    if py.exists() and STAMP.exists() and STAMP.read_text() == _wanted_stamp():
        return py
    if not py.exists():
        print(f"swarm: creating {VENV} (first run only)", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("swarm: installing swarm and its dependencies into .venv", file=sys.stderr)
    cmd = [
        str(py),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "-e",
        f"{ROOT}[test]",
    ]
    if subprocess.run(cmd).returncode != 0:
        sys.exit("swarm: installing dependencies failed (see pip's output above)")
    STAMP.write_text(_wanted_stamp())
    return py


def main() -> None:
    args = sys.argv[1:]
    py = ensure_venv()
    if args[:1] == ["test"]:
        os.chdir(ROOT)
        # the real agent CLIs the tests drive, pinned; installed once into .venv
        subprocess.run([str(py), "-m", "swarm_tui.testing.clis"])
        argv = [str(py), "-m", "pytest", *args[1:]]
    else:
        argv = [str(py), "-m", "swarm_tui.cli", *args]
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
