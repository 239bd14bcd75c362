"""A stand-in nvidia-smi for tests of GPU readings (no GPU on the test machine)."""

from __future__ import annotations

from pathlib import Path


def fake_nvidia_smi(where: Path, script: str) -> Path:
    """Write `script` as `where`/fakebin/nvidia-smi (executable); returns the directory to put
    first on PATH."""
    bindir = where / "fakebin"
    bindir.mkdir(exist_ok=True)
    smi = bindir / "nvidia-smi"
    smi.write_text(script)
    smi.chmod(0o755)
    return bindir
