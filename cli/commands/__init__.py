"""One module per ``lama-dice`` subcommand (see :mod:`lama_dice.cli.main`)."""


def agent_specs_epilog() -> str:
    """The ``Agent specs:`` list that ends the help of the commands that take agent specs ("" if it cannot load)."""
    try:
        from lama_dice.agents.registry import agent_specs_help

        return "Agent specs:\n" + agent_specs_help()
    except Exception:  # help text only; never break --help
        return ""
