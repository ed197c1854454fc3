"""MaskablePPO training from YAML configs (:mod:`lama_dice.train.trainer`); RLlib in :mod:`lama_dice.train.rllib`."""
