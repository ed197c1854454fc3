"""The shipped network of every table size: names, the hint for a network at the wrong table, web and play.

The files themselves (loading, playing, recorded actions) are checked with the other shipped
agents in tests/test_ppo_agent.py (``SHIPPED_PLAYERS``).
"""

from __future__ import annotations

import pytest

from lama_dice.agents.agentfile import read_description
from lama_dice.agents.ppo import PRETRAINED_DIR, pretrained_names, shipped_for, shipped_players
from lama_dice.agents.registry import make_agent

#: The learned agents of the tables that had none before issue 32.
NEW_TABLES = {3: "ppo:3p", 5: "ppo:5p", 6: "ppo:6p"}


def test_every_shipped_name_says_its_files_player_count():
    """shipped_players(NAME) is read from the name; it must be what the agent file was trained for."""
    for name in pretrained_names():
        desc = read_description(PRETRAINED_DIR / f"ppo_{name}.safetensors")
        assert shipped_players(name) == desc["num_players"], name


def test_shipped_players_reads_only_shipped_style_names():
    assert shipped_players("solo") == shipped_players("solo-v1") == 1
    assert shipped_players("2p-v2") == 2 and shipped_players("6p") == 6
    assert shipped_players("runs/x") is None and shipped_players("p") is None and shipped_players("xp") is None


def test_every_table_size_has_a_shipped_network_current_first():
    assert shipped_for(1)[0] == "ppo:solo"
    assert shipped_for(2) == ["ppo:2p", "ppo:2p-v4", "ppo:2p-v3", "ppo:2p-v2", "ppo:2p-v1"]
    assert shipped_for(4) == ["ppo:4p", "ppo:4p-v1"]
    for n, spec in NEW_TABLES.items():
        assert shipped_for(n) == [spec]
    assert shipped_for(7) == []


def test_a_network_at_the_wrong_table_names_the_shipped_one_for_it():
    from lama_dice.agents.agentfile import CheckpointError

    agent = make_agent("ppo:4p")
    with pytest.raises(CheckpointError, match=r"trained for 4 players, the game has 3 \(the shipped agent for 3: "
                                              r"ppo:3p\)$") as info:
        agent.check_compatible(3)
    assert "\n" not in str(info.value)


def test_play_refuses_a_network_for_another_table_in_one_line_with_the_fitting_one(capsys):
    from lama_dice.cli.main import main

    assert main(["play", "--players", "5", "--opponents", "ppo:4p"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.endswith("(the shipped agent for 5: ppo:5p)")


def test_play_sets_up_a_game_against_each_new_network():
    from lama_dice.cli.play import make_opponents, resolve_seats

    for n, spec in NEW_TABLES.items():
        players, specs = resolve_seats(n, [spec], 0)
        agents = make_opponents(specs, seed=1, num_players=players)
        assert players == n and sorted(agents) == list(range(1, n)) and all(a.num_players == n for a in agents.values())


def test_the_web_app_offers_and_plays_the_new_networks():
    from lama_dice.cli.web.games import WebGame, check_spec, shipped_specs

    offered = shipped_specs()
    for n, spec in NEW_TABLES.items():
        assert spec in offered and check_spec(spec) == spec
        game = WebGame("g", n, 0, [spec], seed=2)
        assert game.game.num_players == n and game.specs == {p: spec for p in range(1, n)}
    assert offered.index("ppo:3p") < offered.index("ppo:2p-v1")  # the current networks before the -vN ones
