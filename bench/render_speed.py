"""Frames per second of the table picture (``render_mode="rgb_array"``) and of GIF encoding.

Contenders, each timed alternately over the same pre-collected states (see
:mod:`lama_dice.bench.measure`):

* ``picture_2p``, ``picture_4p``, ``picture_6p``: :class:`lama_env.picture.TablePicture` on
  states of random games (uniform legal actions; the states are collected and copied
  beforehand, so the rules engine is not timed), frames per second;
* ``env_rgb_array``: ``LamaDice-v1`` (2 players, random opponent) with ``render_mode="rgb_array"``:
  ``step`` + ``render()`` per learner decision, against ``step`` alone (``env_no_render``),
  the share rendering adds to a recorded episode;
* ``gif``: :func:`lama_dice.animation.write_gif` of two-player frames into memory
  (palette mapping, frame differencing and LZW), frames per second and bytes per frame.

Run alone::

    python -m lama_dice.bench.render_speed --frames 2000 --repeats 3
"""

from __future__ import annotations

import argparse
import io
import json
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from .measure import Sample, alternate, summary, timed

PLAYERS = (2, 4, 6)


def random_states(num_players: int, count: int, seed: int) -> list[Any]:
    """``count`` copies of states of random games (uniform legal actions), game ends included."""
    from lama_env.engine import LamaGame

    rng = random.Random(seed)
    out: list[Any] = []
    g = LamaGame(num_players, seed=seed, record=False)
    while len(out) < count:
        out.append(g.clone())
        if g.game_over:
            g = LamaGame(num_players, seed=seed + len(out), record=False)
        else:
            g.step(rng.choice(g.legal_actions()))
    return out


def _draw_all(num_players: int, states: list[Any]) -> Callable[[int], Sample]:
    from lama_env.picture import TablePicture

    draw = TablePicture(num_players)
    for s in states[:50]:  # warm the sprite caches (the first frames draw their sprites)
        draw(s)

    def one(_i: int) -> Sample:
        def work() -> None:
            for s in states:
                draw(s)
        return timed(len(states), work)

    return one


def _env_steps(frames: int, seed: int, render: bool) -> Callable[[int], Sample]:
    import gymnasium

    import lama_env  # noqa: F401 (registers LamaDice-v1)

    env = gymnasium.make("LamaDice-v1", num_players=2, opponents=["random"],
                         render_mode="rgb_array" if render else None)

    def one(i: int) -> Sample:
        rng = np.random.default_rng(seed + i)

        def work() -> None:
            _obs, info = env.reset(seed=seed + i)
            for _ in range(frames):
                a = int(rng.choice(np.flatnonzero(info["action_mask"])))
                _obs, _r, term, trunc, info = env.step(a)
                if render:
                    env.render()
                if term or trunc:
                    _obs, info = env.reset()
        return timed(frames, work)

    one(0)  # warm up
    return one


def _gif(frames: list[np.ndarray]) -> Callable[[int], Sample]:
    from lama_dice.animation import write_gif

    write_gif(frames[:2], io.BytesIO())  # the palette is built once per player count

    def one(_i: int) -> Sample:
        buf = io.BytesIO()

        def work() -> dict[str, Any]:
            write_gif(frames, buf, fps=4)
            return {"bytes": buf.tell()}
        return timed(len(frames), work)

    return one


def run(frames: int, gif_frames: int, repeats: int, seed: int = 0,
        log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time the picture, the env's ``rgb_array`` rendering and GIF encoding; a JSON-ready section."""
    from lama_env.picture import TablePicture, frame_shape

    states = {n: random_states(n, frames, seed) for n in PLAYERS}
    draw2 = TablePicture(2)
    gif_frames_list = [draw2(s) for s in states[2][:gif_frames]]
    contenders: dict[str, Callable[[int], Sample]] = {f"picture_{n}p": _draw_all(n, states[n]) for n in PLAYERS}
    contenders["env_rgb_array"] = _env_steps(frames, seed, render=True)
    contenders["env_no_render"] = _env_steps(frames, seed, render=False)
    contenders["gif"] = _gif(gif_frames_list)
    samples = alternate(contenders, repeats, log=log)
    results = {k: summary(v, "frames" if k != "env_no_render" else "steps") for k, v in samples.items()}
    for n in PLAYERS:
        results[f"picture_{n}p"]["frame_shape"] = list(frame_shape(n))
    results["gif"]["bytes_per_frame"] = float(np.median([s.extra["bytes"] for s in samples["gif"]])) / gif_frames
    render_us = results["env_rgb_array"]["us_per_unit"] - results["env_no_render"]["us_per_unit"]
    return {"frames": frames, "gif_frames": gif_frames, "repeats": repeats, "results": results,
            "render_us_per_env_step": render_us,
            "render_share_of_env_step": render_us / results["env_rgb_array"]["us_per_unit"]}


def main() -> None:
    """Command line: print the section as JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=2000)
    ap.add_argument("--gif-frames", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(json.dumps(run(args.frames, args.gif_frames, args.repeats, args.seed), indent=1))


if __name__ == "__main__":
    main()
