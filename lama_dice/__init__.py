"""lama-dice beyond the environment: agents, evaluation, training, the command line, benchmarks.

The repository keeps each of these in a top-level folder; ``pyproject.toml`` maps them into
this one namespace (setuptools ``package-dir``), so that nothing generic (``agents``,
``train``...) lands in site-packages:

* :mod:`lama_dice.animation`, :mod:`lama_dice.atomic`, :mod:`lama_dice.yaml_reader` (in
  ``lama_dice/`` itself): the application's tools on :mod:`lama_env` (records as GIF/MP4 animations,
  atomic file writes, the bounded YAML reader of training configs), which every package below may use;
* :mod:`lama_dice.agents`: the policy protocol, heuristics, the exact solver, lookahead,
  learned agents (``ppo:``, ``rllib:``), weights-only agent files and the spec registry;
* :mod:`lama_dice.evaluation`: tournaments with seat rotation, statistics, leagues;
* :mod:`lama_dice.train`: MaskablePPO training from YAML configs; :mod:`lama_dice.train.rllib`
  for Ray RLlib;
* :mod:`lama_dice.cli`: the ``lama-dice`` command (also ``python -m lama_dice``);
* :mod:`lama_dice.bench`: speed benchmarks (``lama-dice bench``);
* ``lama_dice/configs``: the shipped training configs (``lama-dice train default``).

The environments and the rules engine are the separate package :mod:`lama_env`, which
imports nothing from here.
"""

from lama_env import __version__

__all__ = ["__version__"]
