"""tools.search_noise: the network it measures is the one its --net names, and compare refuses mixed files."""

from __future__ import annotations

import json

import pytest

from tools import search_noise


def test_measure_records_its_network_and_compare_refuses_another(tmp_path):
    out = {}
    for net in ("ppo:2p", "ppo:2p-v3"):
        out[net] = tmp_path / f"{net.replace(':', '_')}.json"
        assert search_noise.main(["measure", "--net", net, "--positions", "3", "--rollouts", "2", "--rounds", "1",
                                  "--out", str(out[net])]) == 0
        d = json.loads(out[net].read_text(encoding="utf-8"))
        assert d["net"] == net and len(d["positions"]) == 3
        for row in d["positions"]:
            assert str(row["base"]) in row["vals"] and len(row["vals"]) == row["legal"]
    # files from other networks hold other games: compare says so rather than pairing them
    with pytest.raises(SystemExit, match="other networks"):
        search_noise.main(["compare", str(out["ppo:2p"]), str(out["ppo:2p-v3"])])
    assert search_noise.main(["compare", str(out["ppo:2p"]), str(out["ppo:2p"])]) == 0

