"""MaskablePPO training from YAML configs (:mod:`.trainer`); Ray RLlib in :mod:`.rllib`."""
