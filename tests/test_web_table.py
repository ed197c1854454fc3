"""What the Play page reads from the API.

Labels as the cards print them, the person's own roll under "Since your last move", outcomes for every
choice, single choices played for the person, records that say who played, and the offline API page.
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi", reason="the web extra: pip install -e '.[web]' (make test installs it)")

from fastapi.testclient import TestClient

from lama_dice.cli.play import choice_label
from lama_dice.cli.web.app import create_app
from lama_env import __version__
from lama_env import actions as A
from lama_env.record import replay
from lama_env.rules import FACES


@pytest.fixture()
def client():
    with TestClient(create_app()) as c:
        yield c


def test_labels_show_faces_as_the_cards_print_them():
    assert [choice_label(A.take_action(f)) for f in range(7)] == [f"Take {f}" for f in FACES]
    assert choice_label(A.take_action(0)) == "Take L"  # not "Take l" (str.capitalize lowers the rest)
    assert choice_label(A.discard_action((1, 0, 0, 1, 0, 0, 0))) == "Discard L, 3"
    assert choice_label(A.discard_action((2, 0, 0, 0, 0, 0, 0))) == "Discard 2 \u00d7 L"
    assert (choice_label(A.ROLL), choice_label(A.QUIT)) == ("Roll", "Quit")


def test_roll_and_quit_have_outcomes_and_the_turn_counts_from_one(client):
    s = client.post("/api/games", json={"players": 2, "opponents": ["random"], "seed": 1}).json()
    assert s["table"]["turns_in_round"] == 0 and s["table"]["turn"] == 1  # the first turn is turn 1, not 0
    out = {c["label"]: c["outcome"] for c in s["choices"]}
    assert out["Roll"].startswith("matches nothing ")
    assert out["Roll"].endswith("% of the time (then you take a row card)")
    assert f"{100 * s['odds']['p']:.1f}%" in out["Roll"]
    assert out["Quit"].startswith("stop for this round; your display scores ")


def test_your_roll_is_listed_and_a_single_choice_is_played_for_you(client):
    """Over many deals: a pending discard or take lists the person's roll last (the page's caption).

    A single choice is never offered: it is played at once, and the events say so.
    """
    singles = pending = 0
    for seed in range(60):
        s = client.post("/api/games", json={"players": 2, "opponents": ["always-roll"], "seed": seed}).json()
        gid = s["id"]
        before = list(s["events"])
        s = client.post(f"/api/games/{gid}/act", json={"action": A.ROLL, "seq": s["seq"]}).json()
        phase = s["table"]["phase"]
        assert len(s["choices"]) != 1, s["choices"]
        if phase in ("discard", "take"):
            pending += 1
            dice = " ".join(FACES[f] for f in s["table"]["dice"])
            assert s["events"][:-1] == before  # what happened before your roll is still listed
            assert s["events"][-1].startswith(f"You: rolls {dice}: it matches")
            assert ("choose what to discard" if phase == "discard" else "take a card from the llama row") \
                in s["events"][-1]
        only = [e for e in s["events"] if e.startswith("Only one choice: ")]
        if only:
            singles += 1
            rec = client.get(f"/api/games/{gid}/record").json()
            first = rec["rounds"][0]["turns"][0]
            assert first["player"] == 0 and ("discard" in first or "take" in first)
            label = only[0].removeprefix("Only one choice: ").split(" (")[0]
            assert label.startswith(("Discard ", "Take ")) and only[0].endswith("), played for you.")
            assert s["events"][0].startswith("You: rolls ")
            assert replay(rec)["valid"]
    assert singles >= 3 and pending >= 20, (singles, pending)


def test_the_games_record_says_who_played_and_watch_shows_those_names(client):
    s = client.post("/api/games", json={"players": 3, "seat": 1, "opponents": ["random", "threshold:0.3"],
                                        "seed": 9}).json()
    rec = client.get(f"/api/games/{s['id']}/record").json()
    assert rec["format"] == "lama-dice-record/2"
    assert rec["about"] == {"names": ["P0 random", "You", "P2 threshold:0.3"], "agents": ["random", None,
                            "threshold:0.3"], "seed": 9, "version": __version__}
    assert replay(rec)["valid"]
    frames = client.post("/api/replay", content=client.get(f"/api/games/{s['id']}/record").text).json()
    assert frames["names"] == ["P0 random", "You", "P2 threshold:0.3"]
    assert frames["about"].startswith("Played by P0 random, You, P2 threshold:0.3 (agents: random, a person, "
                                      "threshold:0.3); seed 9; written by lama-dice ")
    unseeded = client.post("/api/games", json={"players": 1}).json()
    assert client.get(f"/api/games/{unseeded['id']}/record").json()["about"]["seed"] is None


def test_the_api_page_works_offline(client, monkeypatch):
    page = client.get("/docs")
    assert page.status_code == 200 and "swagger-ui" in page.text
    urls = re.findall(r"""(?:src|href)=["']([^"']+)""", page.text) + re.findall(r"url: *'([^']+)'", page.text)
    assert urls and not [u for u in urls if "//" in u]  # no CDN: every asset from this server
    for u in urls:
        r = client.get(u)
        assert r.status_code == 200, u
    assert client.get("/static/api-docs/swagger-ui-bundle.js").headers["content-type"].startswith(
        ("application/javascript", "text/javascript"))
    # without the package, the page says what to install instead of loading a CDN
    import lama_dice.cli.web.app as app_module

    monkeypatch.setattr(app_module, "docs_assets", lambda: None)
    with TestClient(create_app()) as c:
        text = c.get("/docs").text
    assert "pip install fastapi-offline" in text and "/openapi.json" in text and "http" not in text
