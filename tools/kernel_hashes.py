"""Hashes of thousands of seeded games played by the compiled kernels: same seeds, same games.

A refactor of the compiled engine (:mod:`lama_env.batched`, :mod:`lama_env._vector_kernel`)
must not change what a seed plays.  This script plays, for fixed seeds:

* ``evaluate``: the fast backend's outcome arrays (and :meth:`EvalResult.to_json`) of
  several heuristic pairings, player counts and rules configs, plus trajectory logs;
* ``vector``: :class:`lama_env.vector.VectorGame` trajectories (observations, masks,
  players, rewards, episode flags, final observations, dice, records) under a fixed
  NumPy action policy, for every player count, rules config, reward and episode mode;
* ``vector_env``: the Gymnasium vector env (:mod:`lama_env.vector_env`) with native and
  Python opponents, both autoreset modes, ``auto_forced`` and illegal actions;

and prints one SHA-256 per case (JSON).  Run it before and after a change and compare::

    python -m tools.kernel_hashes --out before.json
    python -m tools.kernel_hashes --check before.json      # exit status 1 on any difference

``tools/kernel_hashes.json`` holds the hashes of the code before the one-kernel refactor
(issue 20); ``--check tools/kernel_hashes.json`` must pass while behaviour is unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

CUSTOM_DICE = (("L", "L", "L", "1", "2", "3"), ("L", "L", "L", "4", "5", "6"), ("L", "L", "6", "6", "1", "1"))
RULES: dict[str, dict[str, Any]] = {
    "default": {},
    "also_match-free": {"triple_llama": "also_match", "must_discard": False},
    "t15": {"triple_llama": "chip_only", "must_discard": False, "end_threshold": 15},
    "custom-dice": {"triple_llama": "also_match", "must_discard": True, "end_threshold": 70, "dice": CUSTOM_DICE},
}
PAIRINGS = [
    ("threshold:0.2", "threshold:0.2"),
    ("random", "threshold:0.3"),
    ("points:12", "always-roll"),
    ("random", "random"),
]
DEFAULT_FILE = Path(__file__).with_name("kernel_hashes.json")


class _Hasher:
    def __init__(self) -> None:
        self.h = hashlib.sha256()

    def add(self, *items: Any) -> None:
        for x in items:
            if isinstance(x, np.ndarray):
                a = np.ascontiguousarray(x)
                self.h.update(f"{a.dtype.str}{a.shape}".encode())
                self.h.update(a.tobytes())
            else:
                self.h.update(json.dumps(x, sort_keys=True, default=str).encode())

    def hexdigest(self) -> str:
        return self.h.hexdigest()


# ------------------------------------------------------------------------------ evaluation
def _evaluate_cases() -> Iterator[tuple[str, Callable[[_Hasher], None]]]:
    from lama_dice.agents.native import play_batch
    from lama_dice.evaluation import evaluate

    for rname, rules in RULES.items():
        for n in (1, 2, 3, 4, 6):
            for i, pair in enumerate(PAIRINGS):
                specs = [pair[s % 2] for s in range(n)]

                def case(h: _Hasher, specs: list[str] = specs, n: int = n, rules: dict = rules, i: int = i) -> None:
                    res = evaluate(specs, num_players=n, games=1200, seed=11 + i, rules=rules, backend="fast")
                    out = res.to_json()
                    out.pop("elapsed_s", None)
                    h.add(out)
                    o = res.outcomes
                    assert o is not None
                    h.add(o.seating, o.totals, o.round_points, o.rounds, o.busts, o.quits, o.went_out)
                    b = play_batch(n, specs, games=300, seed=5 + i, rules=rules, log_games=range(0, 300, 7))
                    h.add(b.totals, b.round_points, b.rounds, b.busts, b.quits, b.went_out, b.triple_llamas)
                    for g in sorted(b.logs):
                        h.add(b.logs[g])

                yield f"evaluate/{rname}/{n}p/{i}", case


# ------------------------------------------------------------------------------ vector game
def _vector_cases() -> Iterator[tuple[str, Callable[[_Hasher], None]]]:
    from lama_env.vector import VectorGame

    modes = [("win", "game", None), ("points", "game", None), ("win", "round", None), ("points", "game", 3)]
    for rname, rules in RULES.items():
        for n in range(1, 7):
            for reward, episode, max_rounds in modes:
                if n == 1 and reward == "win":
                    continue

                def case(h: _Hasher, n: int = n, rules: dict = rules, reward: str = reward, episode: str = episode,
                         max_rounds: int | None = max_rounds) -> None:
                    vg = VectorGame(64, n, seed=3 * n, record=True, reward=reward, episode=episode,
                                    max_rounds=max_rounds, rules=rules)
                    vg.reset()
                    rng = np.random.default_rng(n)
                    for t in range(400):
                        if t == 200:
                            vg.reset(seed=99)
                        u = rng.random(vg.action_mask.shape, dtype=np.float32)
                        # roll more often than quit, so rounds see every ending
                        u[:, 0] += 0.5
                        vg.step(np.argmax(u * vg.action_mask, axis=1))
                        h.add(vg.observation, vg.action_mask, vg.current_player, vg.rewards, vg.terminated,
                              vg.truncated, vg.final_observation, vg.round_ended, vg.rolled)
                        if t % 50 == 0:
                            h.add(vg.displays, vg.totals, vg.row, vg.quit, vg.phase, vg.dice, vg.hands,
                                  vg.start_player, vg.round_index, vg.observe(0))
                    h.add(vg.records())

                yield f"vector/{rname}/{n}p/{reward}-{episode}-{max_rounds}", case


# ------------------------------------------------------------------------------ gym vector env
def _vector_env_cases() -> Iterator[tuple[str, Callable[[_Hasher], None]]]:
    from lama_env.vector_env import LamaDiceVectorEnv

    setups: list[tuple[str, dict[str, Any]]] = [
        ("threshold-2p", {"num_players": 2, "opponents": ["threshold:0.2"]}),
        ("random-3p-points", {"num_players": 3, "opponents": ["random", "points:12"], "reward": "points"}),
        ("mixed-4p-forced", {"num_players": 4, "opponents": ["random", "always-roll", "threshold:0.3"],
                             "auto_forced": True}),
        ("python-opp-2p", {"num_players": 2, "opponents": ["lookahead"], "record": True}),
        ("same-step-6p", {"num_players": 6, "opponents": ["threshold:0.2"], "autoreset_mode": "SameStep",
                          "max_rounds": 4}),
        ("round-episode", {"num_players": 2, "opponents": ["random"], "episode": "round", **RULES["t15"]}),
        ("custom-dice-3p", {"num_players": 3, "opponents": ["threshold:0.25"], **RULES["custom-dice"]}),
        ("illegal-lose", {"num_players": 2, "opponents": ["random"], "illegal": "lose"}),
    ]
    for name, kw in setups:

        def case(h: _Hasher, kw: dict[str, Any] = kw, name: str = name) -> None:
            import warnings

            num = 16 if "python" in name else 128
            env = LamaDiceVectorEnv(num_envs=num, **kw)
            obs, info = env.reset(seed=7)
            h.add(obs, info["action_mask"], info["learner_seat"])
            rng = np.random.default_rng(1)
            steps = 60 if "python" in name else 300
            for t in range(steps):
                mask = env.action_masks()
                u = rng.random(mask.shape, dtype=np.float32) + mask
                acts = np.argmax(u, axis=1)
                if name == "illegal-lose" and t % 37 == 0:
                    acts[t % num] = 128
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obs, rew, term, trunc, info = env.step(acts)
                h.add(obs, rew, term, trunc, info["action_mask"], info["learner_seat"], info["illegal_action"])
                for k, v in info["episode_stats"].items():
                    h.add(k, v)
                if "final_obs" in info:
                    h.add(info["final_obs"], info["_final_obs"])
            if env.record:
                h.add([(s, r) for s, r in env.records()])

        yield f"vector_env/{name}", case


def compute(only: str | None = None, log: Callable[[str], None] | None = None) -> dict[str, str]:
    """The hash of every case (``only``: the cases whose name starts with it)."""
    out: dict[str, str] = {}
    for gen in (_evaluate_cases, _vector_cases, _vector_env_cases):
        for name, case in gen():
            if only and not name.startswith(only):
                continue
            h = _Hasher()
            case(h)
            out[name] = h.hexdigest()
            if log:
                log(f"{name} {out[name][:16]}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: print the hashes (``--out`` to save them, ``--check`` to compare with saved ones)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the hashes to this JSON file")
    parser.add_argument("--check", nargs="?", const=str(DEFAULT_FILE), help="compare with this JSON file")
    parser.add_argument("--only", help="only the cases whose name starts with this")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    hashes = compute(args.only, log=(lambda s: print(s, file=sys.stderr)) if args.verbose else None)
    combined = hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()
    if args.out:
        Path(args.out).write_text(json.dumps({"combined": combined, "cases": hashes}, indent=1, sort_keys=True) + "\n")
    if args.check:
        saved = json.loads(Path(args.check).read_text())["cases"]
        diff = [k for k in hashes if saved.get(k) != hashes[k]]
        missing = [] if args.only else [k for k in saved if k not in hashes]
        print(f"{len(hashes)} cases, {len(diff)} differ, {len(missing)} missing; combined {combined[:16]}")
        for k in diff + missing:
            print(f"  differs: {k}")
        return 1 if diff or missing else 0
    print(json.dumps({"combined": combined, "cases": len(hashes)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
