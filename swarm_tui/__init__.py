"""swarm: watch and drive fleets of AI coding agents running in tmux."""

__version__ = "0.1.0"
