"""Training with Ray RLlib (``pip install "lama-dice[rllib]"``), for ``algorithm: rllib-ppo`` configs.

* :mod:`.config`: the YAML schema, :func:`~.config.load_rllib_config`, :func:`~.config.is_rllib_config` (no Ray);
* :mod:`.env`: the PettingZoo env ``lama_dice_v1`` as an RLlib multi-agent env, opponents played inside;
* :mod:`.module`: the action-masking PPO RLModule;
* :mod:`.metrics`: the game statistics callback and the TensorBoard scalars;
* :mod:`.trainer`: the training loop, run folder, checkpoints, evaluation, :func:`~.trainer.train`
  and the command line (``python -m lama_dice.train.rllib CONFIG.yaml``, :mod:`.__main__`);
* :mod:`.models`: the old home of the env and the RLModule, kept for checkpoints that name it.

Only :mod:`.env`, :mod:`.module` and :mod:`.models` import Ray when imported.
"""
