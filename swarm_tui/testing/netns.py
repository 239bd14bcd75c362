"""Real OpenSSH "nodes" for tests: each a network namespace with its own address, its own
`sshd` and a link that can be cut (`ip link set … down`) and restored.

Needs root, `ip` (iproute2) and `/usr/sbin/sshd` (Debian's openssh-server). `available()`
says why not, so tests can skip loudly (and fail in CI, where these must run).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def available() -> str:
    """'' when namespaces and sshd can be used here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "needs root for ip netns"
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    if not Path(SSHD).exists():
        return f"{SSHD} missing: install Debian's openssh-server"
    probe = f"swp{secrets.token_hex(3)}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"cannot create a network namespace: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return ""


def _run(*argv: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")


@dataclass
class NetnsNode:
    """One node: namespace `ns`, address `addr`, an sshd listening there on port 22."""

    name: str
    ns: str
    veth: str  # host side of the link
    addr: str
    sshd: subprocess.Popen[bytes] | None = None

    def listening(self) -> bool:
        """Whether its sshd accepts connections yet (it starts in the background)."""
        try:
            socket.create_connection((self.addr, 22), timeout=1).close()
        except OSError:
            return False
        return True

    def cut(self) -> None:
        _run("ip", "link", "set", self.veth, "down")

    def restore(self) -> None:
        _run("ip", "link", "set", self.veth, "up")


@dataclass
class NetnsCluster:
    """Nodes sharing one client key, ssh config and known_hosts, all under `dir`."""

    dir: Path
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    nodes: dict[str, NetnsNode] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.key = self.dir / "id_ed25519"
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key))
        self.host_key = self.dir / "host_ed25519"
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.host_key))
        self.authorized = self.dir / "authorized_keys"
        self.authorized.write_text((self.dir / "id_ed25519.pub").read_text())
        os.chmod(self.authorized, 0o600)
        self.known_hosts = self.dir / "known_hosts"
        self.config = self.dir / "ssh_config"
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation

    def add(self, name: str) -> NetnsNode:
        i = len(self.nodes) + 1
        ns = f"sw{self.tag}{name}"
        veth, peer = f"sw{self.tag}{i}h", f"sw{self.tag}{i}n"
        subnet = f"10.{200 + i % 50}.{int(self.tag, 16) % 250}"
        _run("ip", "netns", "add", ns)
        node = NetnsNode(name, ns, veth, f"{subnet}.2")
        self.nodes[name] = node
        _run("ip", "link", "add", veth, "type", "veth", "peer", "name", peer)
        _run("ip", "link", "set", peer, "netns", ns)
        _run("ip", "addr", "add", f"{subnet}.1/24", "dev", veth)
        _run("ip", "link", "set", veth, "up")
        _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{subnet}.2/24", "dev", peer)
        _run("ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
        _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        conf = self.dir / f"sshd_{name}.conf"
        conf.write_text(
            f"ListenAddress {node.addr}\nPort 22\nHostKey {self.host_key}\n"
            f"AuthorizedKeysFile {self.authorized}\nPidFile {self.dir}/sshd_{name}.pid\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\nUsePAM no\n"
            "StrictModes no\nAllowStreamLocalForwarding yes\nStreamLocalBindUnlink yes\n"
            "MaxSessions 20\nLogLevel ERROR\nClientAliveInterval 0\n"
        )
        node.sshd = subprocess.Popen(
            ["ip", "netns", "exec", ns, SSHD, "-D", "-e", "-f", str(conf)],
            stdout=subprocess.DEVNULL,
            stderr=open(self.dir / f"sshd_{name}.log", "wb"),
        )
        self._write_client_files()
        return node

    def _write_client_files(self) -> None:
        pub = self.host_key.with_suffix(".pub").read_text().split()
        self.known_hosts.write_text(
            "".join(f"{n.addr} {pub[0]} {pub[1]}\n" for n in self.nodes.values())
        )
        self.config.write_text(
            "".join(
                f"Host {n.name}\n  HostName {n.addr}\n  User root\n  IdentityFile {self.key}\n"
                f"  UserKnownHostsFile {self.known_hosts}\n  IdentitiesOnly yes\n"
                "  StrictHostKeyChecking yes\n\n"
                for n in self.nodes.values()
            )
        )

    def close(self) -> None:
        for node in self.nodes.values():
            if node.sshd is not None:
                node.sshd.terminate()
                try:
                    node.sshd.wait(5)
                except subprocess.TimeoutExpired:
                    node.sshd.kill()
            # the namespace's processes (sshd children) die with it; the veth pair too
            subprocess.run(["ip", "netns", "pids", node.ns], capture_output=True)
            pids = subprocess.run(
                ["ip", "netns", "pids", node.ns], capture_output=True, text=True
            ).stdout.split()
            for pid in pids:
                subprocess.run(["kill", "-9", pid], capture_output=True)
            subprocess.run(["ip", "netns", "del", node.ns], capture_output=True)
            subprocess.run(["ip", "link", "del", node.veth], capture_output=True)
