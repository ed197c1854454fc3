"""The observation encoder: layout, documentation tables, values against a plain reference encoder."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import random_moves

from lama_env import actions as A
from lama_env import observation as O
from lama_env.engine import GameSetupError, LamaGame, Phase
from lama_env.odds import p_no_match
from lama_env.rules import DECK_COUNTS, NUM_FACES, RulesConfig, score_display

ENVIRONMENTS_MD = Path(__file__).resolve().parents[1] / "docs" / "environments.md"


def reference_encode(g: LamaGame, s: int) -> list[float]:
    """The layout of the docs, written the slow and obvious way from the public API."""
    n = g.num_players
    order = [(s + k) % n for k in range(n)]
    thr = g.rules.end_threshold
    top = O.MAX_ROUND_POINTS
    v: list[float] = []
    for p in order:
        v += [g.displays[p][f] / (DECK_COUNTS[f] + 1) for f in range(NUM_FACES)]
    v += [float(g.quit[p]) for p in order]
    to_act = None if g.game_over else g.current_player
    v += [float(p == to_act) for p in order]
    v += [float(p == g.start_player) for p in order]
    v += [min(g.totals[p] / thr, 1.0) for p in order]
    v += [min(max((thr - g.totals[p]) / top, 0.0), 1.0) for p in order]
    v += [score_display(g.displays[p]) / top for p in order]
    v += [float(g.totals[p] + score_display(g.displays[p]) >= thr) for p in order]
    v += [p_no_match(g.displays[p], g.rules) for p in order]
    v += [float(x) for x in g.row]
    v += [float(g.phase == Phase.TURN), float(g.phase == Phase.DISCARD), float(g.phase == Phase.TAKE),
          float(g.game_over)]
    dice = g.dice or ()
    v += [sum(1 for d in dice if d == f) / 3 for f in range(NUM_FACES)]
    v += [float(g.quit.count(False) == 1), g.quit.count(False) / n]
    v += [float(g.rules.must_discard), float(g.rules.triple_llama == "also_match")]
    return v


def random_states(n: int, seed: int, rules: RulesConfig | None = None, limit: int = 400, chance: str = "sampled"):
    """Every state of a random game: decisions and the game end.

    With ``chance="explicit"`` also each roll's chance node and each deal card by card (a round's
    end waits at the next deal's first card).
    """
    yield from random_moves(LamaGame(n, rules, seed=seed, record=False, chance=chance), random.Random(seed).choice,
                            limit)


@pytest.mark.parametrize("n", range(1, 7))
def test_layout_tiles_the_vector(n):
    layout = O.observation_layout(n)
    pos = 0
    for e in layout:
        assert e.start == pos and e.length > 0
        pos += e.length
    assert pos == O.observation_size(n) == 15 * n + 22
    assert len({e.name for e in layout}) == len(layout)


def test_bad_player_count():
    with pytest.raises(ValueError, match=r"num_players must be an integer 1\.\.6, got 7"):
        O.observation_size(7)
    with pytest.raises(ValueError, match=r"num_players must be an integer 1\.\.6, got 0"):
        O.observation_layout(0)


def test_docs_table_matches_the_layout():
    """docs/environments.md holds the table generated from the code, exactly (tools/regen_docs.py rewrites it)."""
    import sys

    root = str(ENVIRONMENTS_MD.parents[1])
    if root not in sys.path:  # tools/ is a folder of the repository, not an installed package
        sys.path.insert(0, root)
    from tools.regen_docs import find_blocks

    table = O.layout_table()
    text = ENVIRONMENTS_MD.read_text(encoding="utf-8")
    blocks = [b for b in find_blocks(text) if b.name == "observation-table"]
    assert len(blocks) == 1, "docs/environments.md must hold one <!-- gen:observation-table --> block"
    body = text[blocks[0].start:blocks[0].end]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    assert rows == table.splitlines(), \
        "docs/environments.md is stale: run python -m tools.regen_docs --only observation-table"


def test_env_docstrings_link_the_docs_instead_of_copying_the_table():
    from lama_env import gym_env, lama_dice_v1

    table = O.layout_table()
    for module in (lama_dice_v1, gym_env, O):
        assert "docs/environments.md" in module.__doc__, module.__name__
        copied = [row for row in table.splitlines()[2:] if row in module.__doc__]
        assert not copied, f"{module.__name__} copies the observation table: {copied[0]}"


def test_concrete_table_offsets():
    rows = O.layout_table(3).splitlines()[2:]
    for row, e in zip(rows, O.observation_layout(3), strict=True):
        assert re.match(rf"\| `{e.name}` \| {e.start} \| {e.length} \|", row)


@pytest.mark.parametrize("n", range(1, 7))
def test_encode_matches_reference(n):
    rules = RulesConfig(end_threshold=25) if n % 2 else RulesConfig(triple_llama="also_match", must_discard=False)
    size = O.observation_size(n)
    seen_phases = set()
    for seed, chance in itertools.product(range(3), ["sampled", "explicit"]):
        for g in random_states(n, seed, rules, chance=chance):
            between_rounds = g.is_chance_node() and g.rounds_finished and sum(map(sum, g.displays)) < 6 * n
            seen_phases.add("deal between rounds" if between_rounds else g.phase)
            for s in range(n):
                x = O.encode(g, s)
                assert x.dtype == np.float32 and x.shape == (size,)
                assert np.all(x >= 0.0) and np.all(x <= 1.0)
                np.testing.assert_allclose(x, np.array(reference_encode(g, s), dtype=np.float32), rtol=0, atol=1e-7)
    assert {Phase.TURN, Phase.DISCARD, "deal between rounds"} <= seen_phases


def test_own_seat_first_others_in_turn_order():
    g = LamaGame(4, seed=3)
    blocks = {s: O.describe(O.encode(g, s), 4) for s in range(4)}
    disp0 = np.array(blocks[0]["display"]).reshape(4, 7)
    for s in range(4):
        disp = np.array(blocks[s]["display"]).reshape(4, 7)
        np.testing.assert_array_equal(disp, np.roll(disp0, -s, axis=0))
        assert blocks[s]["start_player"] == [1.0 if (s + k) % 4 == 0 else 0.0 for k in range(4)]


def test_encode_into_out_and_no_mutation():
    g = LamaGame(3, seed=5)
    for _ in range(5):
        g.step(g.legal_actions()[0])
    before = (g.result(), g.displays, g.row, g.dice, g.phase, g.current_player)
    out = np.zeros(O.observation_size(3), dtype=np.float32)
    y = O.encode(g, 1, out=out)
    assert y is out
    np.testing.assert_array_equal(out, O.encode(g, 1))
    assert (g.result(), g.displays, g.row, g.dice, g.phase, g.current_player) == before


def test_encode_returns_fresh_writable_arrays():
    g = LamaGame(2, seed=0)
    a, b = O.encode(g, 0), O.encode(g, 0)
    assert a is not b and a.flags.writeable
    a[:] = 0
    assert b.any()


def test_bad_seat():
    with pytest.raises(ValueError):
        O.encode(LamaGame(2, seed=0), 2)


def _mostly_rolls(pick: random.Random) -> Callable[[list[int]], int]:
    """A chooser of actions that rolls 7 times in 10 when it may, and otherwise picks uniformly."""
    return lambda legal: A.ROLL if A.ROLL in legal and pick.random() < 0.7 else pick.choice(legal)


@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("chance", ["sampled", "explicit"])
def test_encode_is_the_compiled_encoder_at_every_kind_of_state(n, chance):
    """``encode`` of a LamaGame is the compiled encoder over its record, the reference encoder's vector.

    At every kind of state: decisions, chance nodes (a deal under way, a roll's dice) and the
    game's end, from every seat.
    """
    kinds = set()
    for seed, rules in enumerate([RulesConfig(), RulesConfig(triple_llama="also_match", must_discard=True,
                                                             end_threshold=20)] * 2):
        for g in random_moves(LamaGame(n, rules, seed=seed, chance=chance), _mostly_rolls(random.Random(seed))):
            kinds.add("chance" if g.is_chance_node() else g.phase.name)
            for s in range(n):
                fast = O.encode(g, s)
                np.testing.assert_array_equal(fast, g.observe(s))
                np.testing.assert_allclose(fast, np.array(reference_encode(g, s), dtype=np.float32), rtol=0, atol=1e-7,
                                           err_msg=f"seat {s}, {g!r}")
    expected = {"TURN", "DISCARD", "GAME_OVER"} | ({"chance"} if chance == "explicit" else set()) \
        | ({"TAKE"} if n > 1 else set())
    assert expected <= kinds, kinds


def test_the_round_over_mode_is_retired():
    """The manual rounds' round-over state (its own decision one-hot) is gone: the mode is refused in one line."""
    assert "ROUND_OVER" not in Phase.__members__
    with pytest.raises(GameSetupError, match="retired") as e:
        LamaGame(2, seed=0, rounds="manual")
    assert "\n" not in str(e.value) and "last_round" in str(e.value)


def test_encode_refuses_what_is_not_a_game():
    """``encode`` reads a LamaGame's record; anything else is refused in one line that names the vector game."""
    with pytest.raises(TypeError, match=r"encode needs a LamaGame, got dict.*VectorGame\.observe"):
        O.encode({}, 0)  # type: ignore[arg-type]
