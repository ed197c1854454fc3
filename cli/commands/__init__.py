"""One module per ``lama-dice`` subcommand (see :mod:`lama_dice.cli.main`)."""
