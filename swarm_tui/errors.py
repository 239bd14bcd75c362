"""One tree of errors. Each carries a single line a user can act on."""


class SwarmError(Exception):
    """Base of every error swarm reports to a user as one line."""

    exit_code = 1


class ConfigError(SwarmError):
    """A layout or other file is invalid; the message names the file and field."""

    exit_code = 2


class TmuxError(SwarmError):
    """tmux is missing, too old, or refused a command."""


class HostUnreachable(SwarmError):
    """A host's tmux server cannot be reached."""


class AgentNotFound(SwarmError):
    """No agent of that name in the running fleet."""


class NotRunning(SwarmError):
    """No swarm process owns a fleet (nothing listens on the socket)."""


class FleetBusy(SwarmError):
    """Another swarm process already owns this fleet."""
