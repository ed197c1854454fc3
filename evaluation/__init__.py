"""Evaluation: agents play each other with seats rotating; win rates with Wilson intervals, points, ranks.

Also OpenSkill leagues, and two backends to play the games: the rules engine and the
compiled batched engine.  The modules, from the bottom up:

* :mod:`.stats`: the pure math (Wilson intervals, win shares, ranks, ratio intervals);
* :mod:`.outcomes`: :class:`GameOutcomes` (what backends return), :class:`AgentStats`
  and :func:`agent_stats` (the statistics computed from them), :class:`EvaluationError`;
* :mod:`.seating`: who sits where (:func:`rotation_seating`, :func:`league_seating`);
* :mod:`.backends`: the :class:`Backend` protocol and the choice between the backends:
  :mod:`.scalar` (``"python"``, any policy, worker processes, recorded games) and
  :mod:`.compiled` (``"fast"``, native heuristics in Numba; imported on first use);
* :mod:`.saving`: saving games (``save_games=DIR``: records and ``index.json``);
* :mod:`.report`: :class:`EvalResult`, its JSON report and plot;
* :mod:`.evaluate`: :func:`evaluate` and :func:`run_games`, with their argument checks
  and progress bar;
* :mod:`.league`: :func:`league` (OpenSkill ratings) and :func:`solo_values`;
* :mod:`.suite`: the benchmark suite's runner (:func:`~.suite.run_suite`), over
  :mod:`.suite_tasks` (task definitions), :mod:`.suite_results` (result types),
  :mod:`.suite_commands` (the commands a report lists) and :mod:`.suite_illegal`
  (naming the game of an illegal action).

Usage::

    from lama_dice.evaluation import evaluate

    result = evaluate(["threshold:0.2", "random"], num_players=2, games=2000, seed=0)
"""

from .backends import BACKENDS, Backend
from .evaluate import AgentLike, evaluate, run_games
from .league import LeagueEntry, LeagueResult, SoloValue, league, solo_values
from .outcomes import AgentStats, EvaluationError, GameOutcomes, agent_stats
from .report import EvalResult
from .scalar import DEFAULT_CHUNK_SIZE, ScalarBackend
from .seating import league_seating, rotation_seating

__all__ = [
    "BACKENDS",
    "DEFAULT_CHUNK_SIZE",
    "AgentLike",
    "AgentStats",
    "Backend",
    "EvalResult",
    "EvaluationError",
    "GameOutcomes",
    "LeagueEntry",
    "LeagueResult",
    "ScalarBackend",
    "SoloValue",
    "agent_stats",
    "evaluate",
    "league",
    "league_seating",
    "rotation_seating",
    "run_games",
    "solo_values",
]
