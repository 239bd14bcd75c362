"""tmux control mode: protocol parser, command client, safe command builders. No SSH here."""
