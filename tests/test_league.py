"""Tests of the league (lama_dice.evaluation.league) and `lama-dice evaluate --league`."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from lama_dice.cli.main import main
from lama_dice.evaluation.league import league, league_seating
from lama_env.errors import LamaDiceError
from lama_env.record import replay

PY = {"backend": "python"}


def test_league_seating_round_robin():
    s = league_seating(4, 2, 6, seed=0)
    assert s.shape == (6 * 6, 2)
    for a, b in combinations(range(4), 2):
        ab = ((s[:, 0] == a) & (s[:, 1] == b)).sum()
        ba = ((s[:, 0] == b) & (s[:, 1] == a)).sum()
        assert ab == ba == 3  # each pair: 6 games, seats alternating
    # interleaved: the first six games are the six pairs
    assert {tuple(sorted(r)) for r in s[:6].tolist()} == set(combinations(range(4), 2))


def test_league_seating_multiplayer():
    s = league_seating(5, 3, 30, seed=1)
    assert s.shape == (30, 3)
    for row in s:
        assert len(set(row.tolist())) == 3
    for b in range(10):  # each block of 3 games: one lineup, every seat once
        block = s[3 * b:3 * b + 3]
        assert {frozenset(r) for r in block.tolist()} == {frozenset(block[0].tolist())}
        assert all(len(set(block[:, seat].tolist())) == 3 for seat in range(3))
    assert np.array_equal(s, league_seating(5, 3, 30, seed=1))
    assert not np.array_equal(s, league_seating(5, 3, 30, seed=2))


def test_league_two_tiny_agents(tmp_path):
    res = league(["threshold:0.2", "always-roll"], 2, 40, seed=0, **PY)
    assert res.games == 40
    strong, weak = res.entries
    assert strong.mu > weak.mu  # threshold:0.2 beats always-roll about 9 times in 10
    assert strong.sigma < 25 / 3 and weak.sigma < 25 / 3  # uncertainty shrinks from the prior
    assert res.ranking()[0] is strong
    assert strong.stats.games == weak.stats.games == 40
    assert res.pairwise[0][1] + res.pairwise[1][0] == pytest.approx(1.0)
    assert res.pairwise[0][0] is None
    assert res.history_mu.shape == (41, 2)
    data = res.to_json()
    assert [a["spec"] for a in data["agents"]] == ["threshold:0.2", "always-roll"]
    for a in data["agents"]:
        for key in ("mu", "sigma", "ordinal", "win_rate", "win_rate_ci95", "mean_final_points"):
            assert key in a
    json.dumps(data, allow_nan=False)
    again = league(["threshold:0.2", "always-roll"], 2, 40, seed=0, **PY)
    assert json.dumps(again.to_json()) == json.dumps(data)
    png = tmp_path / "league.png"
    res.plot(png)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_league_multiplayer_and_saved_games(tmp_path):
    res = league(["random", "always-roll", "threshold:0.2", "points:10"], 3, 12, seed=0,
                 save_games=tmp_path, save_sample=2, **PY)
    assert res.pairwise is None and res.games == 12
    assert sum(e.stats.games for e in res.entries) == 12 * 3
    assert all(e.stats.mean_rank is not None for e in res.entries if e.stats.games)
    files = sorted(tmp_path.glob("game_*.json"))
    assert len(files) == 2
    for f in files:
        assert replay(json.loads(f.read_text()))["valid"]


@pytest.mark.parametrize("kwargs, match", [
    (dict(agents=["random"]), "at least 2 agents"),
    (dict(agents=["random", "random"], num_players=3), "at least 3 agents"),
    (dict(agents=["random", "random"], games=0), "games"),
    (dict(agents=["random", "bogus"]), "valid specs"),
])
def test_league_bad_arguments(kwargs, match):
    with pytest.raises(LamaDiceError, match=match):
        league(**kwargs)


def test_cli_league(tmp_path, capsys):
    out = tmp_path / "league.json"
    rc = main(["evaluate", "--league", "random", "always-roll", "threshold:0.2", "--games", "4",
               "--json", str(out), "--backend", "python", "--no-progress"])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["league"] is True and data["games"] == 12 and len(data["pairwise_win_rate"]) == 3
    shown = capsys.readouterr().out
    assert "mu-3σ" in shown  # noqa: RUF001 (the CLI prints a real sigma)
    assert "always-roll" in shown
    # both tables number the agents 1..3 by rank, in rank order: the ranking's rows, then the matrix's
    specs = {a["spec"] for a in data["agents"]}
    rows = [line.split()[:2] for line in shown.splitlines() if len(line.split()) > 1 and line.split()[1] in specs]
    ranked = sorted(data["agents"], key=lambda a: -a["ordinal"])
    expected = [[str(r), a["spec"]] for r, a in enumerate(ranked, 1)]
    assert rows == expected + expected
    header = next(line for line in shown.splitlines() if line.split()[:2] == ["#", "agent"] and "mu" not in line)
    assert header.split()[2:] == ["1", "2", "3"]
    first = next(line for line in shown.splitlines() if line.split()[:2] == expected[0] and "%" in line
                 and len(line.split()) == 4)  # the matrix's first row: two win rates, its own cell empty
    where = [a["spec"] for a in data["agents"]]
    i = where.index(expected[0][1])
    j = where.index(expected[1][1])
    assert first.split()[2] == f"{100 * data['pairwise_win_rate'][i][j]:.1f}%"


def test_solo_values_exact_for_heuristics_measured_otherwise():
    from lama_dice.agents.solver import solver_for
    from lama_dice.evaluation.league import solo_values
    from lama_env.rules import RulesConfig

    vals = solo_values(["optimal", "threshold:0.2", "random"], games=30, seed=3)
    solver = solver_for(RulesConfig())
    assert vals[0].exact and abs(vals[0].value - solver.expected_round_points()) < 1e-9
    assert vals[1].exact and vals[1].value > vals[0].value
    assert not vals[2].exact and vals[2].se is not None and vals[2].se > 0
    assert vals[2].value > vals[0].value  # random is far from optimal


def test_league_cli_solo_values_column(capsys):
    from lama_dice.cli.main import main

    assert main(["evaluate", "--league", "optimal", "random", "--games", "6", "--solo-values",
                 "--no-progress", "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [v["spec"] for v in data["solo_values"]] == ["optimal", "random"]
    assert "solo pts/rd" in captured.err
    assert main(["evaluate", "--agents", "random", "random", "--solo-values"]) == 2


def test_the_plot_numbers_agents_as_the_table_does():
    """1, 2, ... by rating (1 = best), whatever the order on the command line: the plot and the table agree."""
    res = league(["always-roll", "random", "threshold:0.2"], 2, 30, seed=0, **PY)
    ranked = [e.spec for e in res.ranking()]
    assert ranked[0] == "threshold:0.2" and ranked[-1] == "always-roll"  # not the command line's order
    history, final = res.figure().axes
    want = [f"{r}: {s}" for r, s in enumerate(ranked, 1)]
    assert [t.get_text() for t in history.get_legend().get_texts()] == want
    assert [t.get_text() for t in final.get_yticklabels()] == want[::-1]  # best at the top
