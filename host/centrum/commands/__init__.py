"""Subcommands of the ``centrum`` CLI, one module each (see ``centrum.cli.COMMANDS``)."""
