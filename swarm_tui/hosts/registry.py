"""The hosts a layout uses, built once: the local machine and SSH nodes by key."""

from __future__ import annotations

from swarm_tui.config.hosts import LOCAL
from swarm_tui.config.layout import LoadedLayout
from swarm_tui.errors import ConfigError
from swarm_tui.hosts.base import Host
from swarm_tui.hosts.local import LocalHost
from swarm_tui.paths import socket_path, tmux_socket_name


def make_hosts(loaded: LoadedLayout) -> dict[str, Host]:
    """One Host per host key the layout's agents use, local first, in layout order."""
    fleet = loaded.fleet
    table = loaded.layout.host_table()
    used: list[str] = []
    for agent in loaded.agents():
        if agent.host not in used:
            used.append(agent.host)
    if LOCAL in used:
        used.remove(LOCAL)
        used.insert(0, LOCAL)
    hosts: dict[str, Host] = {}
    local_socket = str(socket_path(fleet))
    for key in used:
        if key == LOCAL:
            hosts[key] = LocalHost(tmux_socket_name(fleet), fleet, socket_path=local_socket)
        else:
            from swarm_tui.hosts.ssh import SSHHost  # asyncssh only when a layout needs it

            if table[key].slurm is not None:
                raise ConfigError(
                    f"hosts.{key}: a Slurm allocation whose nodes are not known "
                    f"yet (`swarm up` asks Slurm for them)"
                )

            spec, socket = table[key], f"{tmux_socket_name(fleet)}-{key}"
            if spec.transport == "srun":
                from swarm_tui.hosts.srun import SrunHost

                hosts[key] = SrunHost(key, spec, socket, fleet)
            else:
                hosts[key] = SSHHost(key, spec, socket, fleet)
    return hosts
