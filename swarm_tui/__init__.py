"""swarm: watch and drive fleets of AI coding agents running in tmux."""

import warnings

__version__ = "0.1.0"

# cryptography 51 warns, on stderr, at every import of asyncssh (its DSA support): not the
# user's to act on, and a one-line error of `swarm` must stay one line
warnings.filterwarnings("ignore", message="DSA is deprecated", module="asyncssh")
