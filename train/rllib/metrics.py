"""The RLlib trainer's metrics: the game statistics of each episode, summed per iteration, as TensorBoard scalars.

The flow:

1. :class:`lama_dice.train.rllib.env.LamaDiceRLlibEnv` puts each learner seat's
   ``episode_stats`` (win, rounds, points, busts, ...) in its final ``infos``;
2. :class:`GameStatsCallback` (an RLlib callback on the env runners) adds the
   :data:`STAT_KEYS` of each finished episode to per-iteration sums under
   ``result["env_runners"][GAME_METRICS][module]``;
3. :func:`game_scalars` turns the sums into the SB3 pipeline's ``game/*``
   scalars, :func:`rllib_scalars` picks RLlib's own numbers (``rllib/*``) and
   :func:`eval_scalars` names an evaluation's (``eval/<opponent>/*``).

Only :class:`GameStatsCallback` needs Ray: it subclasses RLlib's callback class,
so it is defined when first imported (``from ...metrics import GameStatsCallback``);
the rest of this module imports without the ``rllib`` extra.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .config import MODULE_ID

#: Key of the game metrics in the env runners' results (``result["env_runners"][GAME_METRICS]``).
GAME_METRICS = "lama_game"
#: Per-episode counts each learner seat reports (summed per iteration by :class:`GameStatsCallback`).
STAT_KEYS = ("episodes", "win", "rounds", "points", "final_points", "busts", "quits", "went_out", "steps")

# GameStatsCallback is made by the module __getattr__ below
__all__ = ["GAME_METRICS", "STAT_KEYS", "GameStatsCallback", "eval_scalars", "game_scalars", "rllib_scalars"]  # noqa: F822


def game_scalars(result: Mapping[str, Any], num_players: int, module_id: str = MODULE_ID) -> dict[str, float]:
    """The ``game/*`` scalars of one training iteration, from the callback's sums.

    The names and definitions are those of the SB3 pipeline
    (:func:`lama_dice.train.callbacks.summarize_episodes`): ``episodes``,
    ``rounds_per_episode``, ``win_rate`` (not solo), ``points_per_round``
    (total round points over total rounds), ``final_points``, ``bust_rate``,
    ``quit_rate``, ``went_out_rate`` (per round) and ``episode_length`` (the
    learner seat's decisions), over the learner seats of the episodes that
    ended in the iteration. With self-play, every seat of the shared policy
    counts as one learner episode (so the win rate of pure self-play is about
    1/N).
    """
    sums = (result.get("env_runners") or {}).get(GAME_METRICS, {}).get(module_id) or {}
    s = {k: float(v) for k, v in sums.items() if v is not None and not math.isnan(float(v))}
    n = s.get("episodes", 0.0)
    if not n:
        return {}
    rounds = s.get("rounds", 0.0)
    out = {"episodes": n, "rounds_per_episode": rounds / n, "final_points": s.get("final_points", 0.0) / n,
           "episode_length": s.get("steps", 0.0) / n}
    if num_players > 1:
        out["win_rate"] = s.get("win", 0.0) / n
    if rounds:
        out["points_per_round"] = s.get("points", 0.0) / rounds
        for key, name in (("busts", "bust_rate"), ("quits", "quit_rate"), ("went_out", "went_out_rate")):
            out[name] = s.get(key, 0.0) / rounds
    return out


def _get(d: Mapping[str, Any], *path: str) -> float | None:
    for k in path:
        if not isinstance(d, Mapping) or k not in d:
            return None
        d = d[k]
    try:
        v = float(d)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def rllib_scalars(result: Mapping[str, Any], module_id: str = MODULE_ID) -> dict[str, float]:
    """RLlib's own numbers of one iteration worth plotting (``rllib/*``)."""
    pick = {
        "episode_return_mean": ("env_runners", "episode_return_mean"),
        "episode_len_mean": ("env_runners", "episode_len_mean"),
        "env_steps_sampled": ("env_runners", "num_env_steps_sampled"),
        "env_steps_sampled_lifetime": ("env_runners", "num_env_steps_sampled_lifetime"),
        "sample_time_s": ("timers", "env_runner_sampling_timer"),
        "learn_time_s": ("timers", "learner_update_timer"),
        "total_loss": ("learners", module_id, "total_loss"),
        "policy_loss": ("learners", module_id, "policy_loss"),
        "vf_loss": ("learners", module_id, "vf_loss"),
        "entropy": ("learners", module_id, "entropy"),
        "mean_kl_loss": ("learners", module_id, "mean_kl_loss"),
        "vf_explained_var": ("learners", module_id, "vf_explained_var"),
    }
    out = {k: v for k, path in pick.items() if (v := _get(result, *path)) is not None}
    if out.get("sample_time_s") and out.get("env_steps_sampled"):
        out["sample_steps_per_s"] = out["env_steps_sampled"] / out["sample_time_s"]
    return out


def eval_scalars(opp: str, st: Mapping[str, Any]) -> dict[str, float]:
    """The ``eval/<opponent>/*`` scalars of one evaluation result (the harness's statistics)."""
    from lama_dice.train.callbacks import tag_of

    out = {}
    for key in ("win_rate", "mean_points_per_round", "bust_rate", "quit_rate", "went_out_rate"):
        v = st.get(key)
        if isinstance(v, (int, float)):
            out[f"eval/{tag_of(opp)}/{key}"] = float(v)
    return out


# ---------------------------------------------------------------------------
# the game-statistics callback (needs Ray: defined on first import)

def _define_game_stats_callback() -> type:
    from ray.rllib.callbacks.callbacks import RLlibCallback

    class GameStatsCallback(RLlibCallback):
        """Log each finished episode's game statistics per RLModule (``env_runners/lama_game/<module>/*``).

        For every agent of a finished episode whose final ``infos`` hold
        ``episode_stats`` (see :class:`lama_dice.train.rllib.env.LamaDiceRLlibEnv`),
        adds ``episodes`` (1), ``win``, ``rounds``, ``points``, ``final_points``,
        ``busts``, ``quits``, ``went_out`` and ``steps`` to per-iteration sums under
        the module the agent was mapped to. :func:`game_scalars` turns the sums
        into the SB3 pipeline's ``game/*`` scalars (win rate, points per round,
        bust / quit / went-out rates per round, ...).
        """

        def on_episode_end(self, *, episode: Any, metrics_logger: Any = None, **kwargs: Any) -> None:
            if metrics_logger is None:
                return
            for agent_id, sa in episode.agent_episodes.items():
                try:
                    info = sa.get_infos(-1)
                except (IndexError, KeyError):
                    continue
                stats = info.get("episode_stats") if isinstance(info, Mapping) else None
                if not stats:
                    continue
                module = episode.module_for(agent_id)
                values = dict(stats, episodes=1)
                for key in STAT_KEYS:
                    metrics_logger.log_value((GAME_METRICS, str(module), key), float(values[key]), reduce="sum")

    # a module-level name, so that RLlib's env runners unpickle it by reference
    GameStatsCallback.__module__ = __name__
    GameStatsCallback.__qualname__ = "GameStatsCallback"
    return GameStatsCallback


def __getattr__(name: str) -> Any:
    if name == "GameStatsCallback":
        cls = _define_game_stats_callback()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
