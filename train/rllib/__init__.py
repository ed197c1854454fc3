"""Training with Ray RLlib (``pip install "lama-dice[rllib]"``): :mod:`.trainer` (config and loop),
:mod:`.models` (the env adapter, the action-masking RLModule and the game metrics)."""
