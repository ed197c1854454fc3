"""One module per ``lama-dice`` subcommand (see :mod:`train.cli`)."""
