"""A Host is one machine running one tmux server for the fleet."""
