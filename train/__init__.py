"""Training, evaluation and the ``lama-dice`` command line."""
