"""`swarm layouts` says how big each fleet is. A Slurm entry counts as the nodes it asks for
(`slurm-16x8` read `9 agents on 2 hosts`: its 8-per-node group counted once, on one host);
a job already held, as so many per node of that job."""

from __future__ import annotations

from pathlib import Path

from swarm_tui.config.catalog import fleet_size
from swarm_tui.config.layout import load_layout

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_slurm_layout_counts_its_nodes() -> None:
    assert fleet_size(load_layout(ROOT / "layouts" / "slurm-16x8.toml")) == "129 agents on 17 hosts"


def test_a_held_job_counts_per_node(tmp_path: Path) -> None:
    path = tmp_path / "held.toml"
    path.write_text(
        'name = "held"\n[hosts.gpu]\nslurm = { job = 4711 }\n'
        '[[agents]]\nname = "Planner"\ncli = "mock"\n'
        '[[groups]]\nhosts = ["gpu"]\nper_host = 8\nnames = "mathematicians"\n'
        'cli = "mock"\n'
    )
    assert fleet_size(load_layout(path)) == "1 agent on this machine + 8 per node of Slurm job 4711"


def test_a_plain_fleet(tmp_path: Path) -> None:
    assert fleet_size(load_layout(ROOT / "layouts" / "demo.toml")) == "12 agents on this machine"


def test_lone_agents_on_a_held_job_are_counted_once(tmp_path: Path) -> None:
    path = tmp_path / "lone.toml"
    path.write_text(
        'name = "lone"\n[hosts.gpu]\nslurm = { job = 99 }\n'
        '[[agents]]\nname = "Ada"\ncli = "mock"\nhost = "gpu"\n'
        '[[agents]]\nname = "Bo"\ncli = "mock"\nhost = "gpu"\n'
    )
    assert fleet_size(load_layout(path)) == "2 on the nodes of Slurm job 99"
