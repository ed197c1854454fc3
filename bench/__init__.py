"""Speed benchmarks of lama-dice (run them with ``lama-dice bench``; see :mod:`lama_dice.bench.suite`).

Modules:

* :mod:`lama_dice.bench.measure`: alternating A/B timing, medians and paired ratios.
* :mod:`lama_dice.bench.aec_speed`: agent-steps/s of the PettingZoo env vs PettingZoo's ``leduc_holdem_v4``.
* :mod:`lama_dice.bench.eval_speed`: games/s of evaluation vs the naive engine, kernel load time,
  batched inference of learned policies, scaling, peak memory, the solver's solve time.
* :mod:`lama_dice.bench.train_speed`: MaskablePPO env-steps/s on ``LamaDice-v1`` vs ``connect_four_v3``.
* :mod:`lama_dice.bench.sb3_wrapper`: the SB3 action-mask wrapper of PettingZoo's SB3 tutorial.
* :mod:`lama_dice.bench.suite`: everything above, as one JSON-ready report.
* ``naive_engine.py``, ``engine_speed.py``: the newcomer-style baseline and a standalone
  engine comparison script.

It ships as ``lama_dice.bench``; the PettingZoo baselines need the ``bench`` extra.
"""
