"""The web app's JSON API through FastAPI's test client: whole games, records, every bad request, the store's bounds."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import check_seed_plays_game_0

pytest.importorskip("fastapi", reason="the web extra: pip install -e '.[web]' (make test installs it)")

from fastapi.testclient import TestClient

from lama_dice.cli.main import main
from lama_dice.cli.play import choice_label
from lama_dice.cli.recordfile import load_record_file
from lama_dice.cli.web.app import LOCAL_HOSTS, create_app
from lama_dice.cli.web.games import GameStore, NotFoundError
from lama_env import actions as A
from lama_env.picture import palette
from lama_env.record import replay


@pytest.fixture()
def client(tmp_path):
    (tmp_path / "records").mkdir()
    (tmp_path / "results").mkdir()
    app = create_app(records=tmp_path / "records", results=tmp_path / "results")
    with TestClient(app) as c:
        c.folder = tmp_path
        yield c


def play_to_end(client, state, seed=0, max_requests=3000):
    """Pick among the offered choices at random until the game is over; return the last state."""
    pick = random.Random(seed)
    gid = state["id"]
    for _ in range(max_requests):
        if state["game_over"]:
            return state
        assert state["choices"], state  # rounds flow: always a decision of the person's, until the game's end
        r = client.post(f"/api/games/{gid}/act", json={"action": pick.choice(state["choices"])["action"],
                                                      "seq": state["seq"]})
        assert r.status_code == 200, r.text
        state = r.json()
    raise AssertionError("the game did not end")


OPPONENTS = ["threshold:0.2", "random", "always-roll", "points:10", "threshold:0.3"]


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5, 6])
def test_whole_game_to_the_end_and_the_record_replays(client, players, tmp_path):
    seat = players - 1  # the last seat: the agents play before the person's first move
    body = {"players": players, "seat": seat, "seed": players}
    if players > 1:
        body["opponents"] = OPPONENTS[:players - 1]
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    state = r.json()
    assert state["you"] == seat and state["names"][seat] == "You"
    if players > 1:
        assert state["events"], "the agents before the person's seat have played"
    end = play_to_end(client, state, seed=players)
    res = end["result"]
    assert end["table"]["phase"] == "game_over" and end["choices"] == []
    assert [s["total"] for s in end["table"]["seats"]] == res["totals"]
    assert max(res["totals"]) >= 40
    r = client.get(f"/api/games/{end['id']}/record?download=true")
    assert r.status_code == 200
    assert "attachment" in r.headers["content-disposition"]
    rec = r.json()
    out = replay(rec)
    assert out["valid"] and out["game_over"]
    assert out["totals"] == res["totals"] and out["winners"] == res["winners"]
    # the file replays with the command line too
    path = tmp_path / "game.json"
    path.write_text(r.text)
    assert main(["replay", str(path)]) == 0


def test_choices_name_what_they_do_and_odds_are_exact(client):
    state = client.post("/api/games", json={"players": 2, "opponents": ["random"], "seed": 3}).json()
    assert [c["label"] for c in state["choices"]] == ["Roll", "Quit"]
    odds = state["odds"]
    num = int(odds["fraction"].split("/")[0])
    assert odds["fraction"].endswith("/216") and abs(num / 216 - odds["p"]) < 1e-12
    state = client.post(f"/api/games/{state['id']}/act", json={"action": A.ROLL}).json()
    if state["table"]["phase"] in ("discard", "take"):
        assert state["odds"] is None
        assert all(c["outcome"] for c in state["choices"])
        assert [c["action"] for c in state["choices"]]
    assert choice_label(A.discard_action((0, 0, 0, 0, 0, 2, 0))) == "Discard 2 \u00d7 5"
    assert choice_label(A.discard_action((1, 0, 0, 2, 0, 0, 0))) == "Discard L, 2 \u00d7 3"
    assert choice_label(A.take_action(4)) == "Take 4"


def test_info_serves_the_pictures_palette_and_the_agents(client):
    info = client.get("/api/info").json()
    assert info["palette"] == palette()
    assert info["agents"]["shipped"][0].startswith("ppo:")
    assert "threshold" in info["agents"]["builtin"] and "python" not in info["agents"]["builtin"]
    assert "optimal" not in info["agents"]["builtin"]  # an alias of solo-optimal: listed once
    assert info["limits"]["max_games"] > 0
    for page in ("/", "/play", "/watch", "/results", "/static/table.js", "/docs", "/openapi.json"):
        assert client.get(page).status_code == 200, page


def _new(client):
    r = client.post("/api/games", json={"players": 2, "opponents": ["threshold:0.2"], "seed": 11})
    assert r.status_code == 201
    return r.json()


BAD_ACTS = [
    ({"action": A.take_action(3)}, 409, "illegal action"),
    ({"action": 999}, 409, "is not an action"),
    ({"action": -1}, 409, "not an action"),
    ({"action": "roll"}, 422, "action"),
    ({"action": True}, 422, "action"),
    ({"action": 0.5}, 422, "action"),
    ({}, 422, "action: Field required"),
    ({"action": 0, "extra": 1}, 422, "extra"),
    ({"action": 0, "seq": 5}, 409, "moved on"),
]


@pytest.mark.parametrize(("body", "status", "words"), BAD_ACTS)
def test_a_bad_action_is_refused_with_one_line_and_changes_nothing(client, body, status, words):
    state = _new(client)
    gid = state["id"]
    r = client.post(f"/api/games/{gid}/act", json=body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert words in err and "\n" not in err
    assert client.get(f"/api/games/{gid}").json() == state
    assert client.post(f"/api/games/{gid}/act", json={"action": A.ROLL, "seq": 0}).status_code == 200


BAD_REQUESTS = [
    ("post", "/api/games/NOPE/act", {"action": 0}, 404, "no game"),
    ("get", "/api/games/NOPE", None, 404, "no game"),
    ("get", "/api/games/NOPE/record", None, 404, "no game"),
    ("post", "/api/games/NOPE/next-round", {}, 404, "Not Found"),  # retired: rounds flow on (round_end)
    ("post", "/api/games", {"players": 7}, 400, "players must be 1..6"),
    ("post", "/api/games", {"players": 0}, 400, "players must be 1..6"),
    ("post", "/api/games", {"players": 2, "seat": 2}, 400, "seat must be 0..1"),
    ("post", "/api/games", {"players": 1, "opponents": ["random"]}, 400, "no opponents"),
    ("post", "/api/games", {"players": 4, "opponents": ["random", "random"]}, 400, "2 specs for 3 opponents"),
    ("post", "/api/games", {"players": 2, "opponents": ["nosuchagent"]}, 400, "unknown agent spec"),
    # a typo of a shipped network is an unknown spec with the nearest offered one, not a file to offer with --agents
    ("post", "/api/games", {"players": 2, "opponents": ["ppo:2pp"]}, 400,
     "unknown agent spec 'ppo:2pp' (did you mean 'ppo:2p'?)"),
    ("post", "/api/games", {"players": 2, "opponents": ["treshold:0.2"]}, 400, "(did you mean 'threshold'?)"),
    ("post", "/api/games", {"players": 2, "opponents": ["threshold:abc"]}, 400, "threshold"),
    ("post", "/api/games", {"players": 2, "opponents": ["python:evil.py:Policy"]}, 400, "not offered to web pages"),
    ("post", "/api/games", {"players": 2, "opponents": ["ppo:/etc/passwd"]}, 400, "not offered to web pages"),
    ("post", "/api/games", {"players": 2, "opponents": ["rllib:/tmp/x"]}, 400, "not offered to web pages"),
    ("post", "/api/games", {"players": 2, "opponents": ["mcts:10,rollout=python:evil.py:P"]}, 400,
     "not offered to web pages"),
    ("post", "/api/games", {"players": 2, "opponents": [""]}, 400, "non-empty"),
    ("post", "/api/games", {"players": "2"}, 422, "players"),
    ("post", "/api/games", {"players": 2, "seed": -1}, 422, "seed"),
    ("post", "/api/games", {"players": 2, "colour": "red"}, 422, "colour"),
    ("post", "/api/games", [1, 2], 422, "body"),
    ("get", "/api/nothing", None, 404, "Not Found"),
    ("delete", "/api/games", None, 405, "Method Not Allowed"),
]


@pytest.mark.parametrize(("method", "url", "body", "status", "words"), BAD_REQUESTS)
def test_every_bad_request_gets_a_4xx_with_one_line(client, method, url, body, status, words):
    before = _new(client)
    held = len(client.app.state.games)
    kw = {} if body is None else {"json": body}
    r = getattr(client, method)(url, **kw)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert words in err and "\n" not in err
    assert len(client.app.state.games) == held  # no game made
    assert client.get(f"/api/games/{before['id']}").json() == before  # nothing changed; the server serves


def test_malformed_json_body_and_a_network_for_another_player_count(client):
    r = client.post("/api/games", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "JSON" in r.json()["error"]
    r = client.post("/api/games", json={"players": 4, "opponents": ["ppo:2p"]})
    assert r.status_code == 400 and "\n" not in r.json()["error"]


def test_moves_out_of_turn_and_round_flow(client):
    state = _new(client)
    gid = state["id"]
    assert state["round_end"] is None and state["last_round"] is None
    r = client.post(f"/api/games/{gid}/act", json={"action": A.QUIT})  # quit: the agent plays the round out
    s = r.json()
    # rounds flow: round 2 is dealt and it is the person's decision again; the page pauses on round 1's end first
    end = s["round_end"]
    assert s["table"]["round"] == 2 and s["choices"] and s["last_round"] is not None
    assert end["table"]["round"] == 1 and end["table"]["phase"] == "round_end" and end["table"]["current"] is None
    assert end["table"]["status"].startswith("Round over") and end["table"]["status"] == end["events"][-1]
    assert end["events"][0].startswith("You: quits")
    assert [seat["total"] for seat in end["table"]["seats"]] == s["last_round"]["totals"]
    assert [seat["points"] for seat in end["table"]["seats"]] == s["last_round"]["points"]
    assert not any(e.startswith("Round over") for e in s["events"])  # the new round's lines only
    assert client.post(f"/api/games/{gid}/next-round", json={}).status_code == 404  # retired: nothing to call
    r = client.post(f"/api/games/{gid}/act", json={"action": A.ROLL, "seq": s["seq"]})
    assert r.status_code == 200 and r.json()["round_end"] is None  # the page showed it before this move


def test_games_are_isolated(client):
    a, b = _new(client), _new(client)
    assert a["id"] != b["id"] and a["table"] == b["table"]  # same seed, same deal
    client.post(f"/api/games/{a['id']}/act", json={"action": A.QUIT})
    assert client.get(f"/api/games/{b['id']}").json() == b


def test_untrusted_host_header_is_refused():
    app = create_app(allowed_hosts=LOCAL_HOSTS)
    with TestClient(app, base_url="http://127.0.0.1:8000") as c:
        assert c.get("/api/info").status_code == 200
        assert c.get("/api/info", headers={"Host": "localhost:8000"}).status_code == 200
        assert c.get("/api/info", headers={"Host": "[::1]:8000"}).status_code == 200
        for host in ("evil.example:8000", "127.0.0.1.evil.example", "[::2]:8000", "", "[::1"):
            r = c.get("/api/info", headers={"Host": host})
            assert r.status_code == 400 and "answers only requests to" in r.json()["error"], host


def test_trusted_file_agent_is_offered(client, tmp_path):
    app = create_app(trusted_agents=("ppo:2p",))
    with TestClient(app) as c:
        assert c.get("/api/info").json()["agents"]["trusted"] == ["ppo:2p"]


# ---------------------------------------------------------------- records (Watch)
def _finished_record(client, players=2, seed=5):
    state = client.post("/api/games", json={"players": players, "opponents": ["random"], "seed": seed}).json()
    play_to_end(client, state, seed=seed)
    return client.get(f"/api/games/{state['id']}/record").json()


def test_a_seed_plays_game_0_of_the_compiled_streams(client):
    """Same seed, same game: a seed deals and rolls what it does in evaluate --backend fast's game 0 and the envs."""
    for players, seed in ((2, 5), (3, 8)):
        check_seed_plays_game_0(_finished_record(client, players=players, seed=seed), seed)


def test_records_under_the_folder_step_by_step(client):
    rec = _finished_record(client)
    sub = client.folder / "records" / "run1"
    sub.mkdir()
    (sub / "game_000001.json").write_text(json.dumps(rec))
    (sub / "index.json").write_text("{}")
    listing = client.get("/api/records").json()
    assert listing["files"] == ["run1/game_000001.json"]
    d = client.get("/api/records/run1/game_000001.json").json()
    turns = sum(len(r["turns"]) for r in rec["rounds"])
    assert len(d["frames"]) == turns + len(rec["rounds"])
    assert d["frames"][0]["turn"] == 0 and d["frames"][1]["line"]
    assert [s["total"] for s in d["frames"][-1]["table"]["seats"]] == replay(rec)["totals"]
    assert d["result"] == replay(rec)
    outside = client.folder / "secret.json"
    outside.write_text(json.dumps(rec))
    for bad in ("%2e%2e/secret.json", "nope.json", "run1/%2e%2e/%2e%2e/secret.json", "/etc/passwd"):
        r = client.get(f"/api/records/{bad}")
        assert r.status_code == 404 and r.json()["error"].startswith("no record"), bad


def _cli_replay(path, capsys):
    code = main(["replay", str(path)])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("mutate", [
    lambda rec: "{broken json",
    lambda rec: json.dumps({**rec, "players": 9}),
    lambda rec: json.dumps({**rec, "rounds": [dict(rec["rounds"][0], turns=[{"player": 1, "action": "quit"}]
                                                  + rec["rounds"][0]["turns"])]}),
    lambda rec: json.dumps([1, 2, 3]),
])
def test_an_invalid_record_gets_the_message_lama_dice_replay_gives(client, capsys, mutate):
    rec = _finished_record(client)
    text = mutate(rec)
    path = client.folder / "records" / "bad.json"
    path.write_text(text)
    code, expected = _cli_replay(path, capsys)
    assert code == 1 and not expected["valid"]
    r = client.get("/api/records/bad.json")
    assert r.status_code == 422
    assert r.json()["error"] == expected["error"] and r.json()["replay"] == expected
    r = client.post("/api/replay?name=" + str(path), content=text.encode())
    assert r.status_code == 422 and r.json()["replay"] == expected


def test_upload_a_record(client):
    rec = _finished_record(client, players=3, seed=8)
    r = client.post("/api/replay", content=json.dumps(rec).encode())
    assert r.status_code == 200 and r.json()["players"] == 3
    r = client.post("/api/replay", content=b"\xff\xfe")
    assert r.status_code == 422 and "UTF-8" in r.json()["error"]
    r = client.post("/api/replay", content=b" " * (5 * 1024 * 1024 + 1))
    assert r.status_code == 413


def test_record_of_an_unfinished_game_replays(client):
    state = _new(client)
    client.post(f"/api/games/{state['id']}/act", json={"action": A.ROLL})
    rec = client.get(f"/api/games/{state['id']}/record").json()
    assert replay(rec)["valid"]
    assert load_record_file  # the Watch page and `lama-dice replay` share the reader


# ---------------------------------------------------------------- results
@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("results")
    for agent in ("random", "threshold:0.2"):
        name = agent.replace(":", "_")
        assert main(["score", agent, "--tasks", "solo", "--games", "20", "--no-progress",
                     "--json", str(folder / f"card_{name}.json")]) == 0
    assert main(["evaluate", "--agents", "threshold:0.2", "random", "--games", "40",
                 "--json", str(folder / "eval.json")]) == 0
    (folder / "notes.json").write_text('{"hello": 1}')
    return folder


def test_results_tables_from_score_cards_and_reports(reports, capsys):
    capsys.readouterr()
    with TestClient(create_app(results=reports)) as c:
        d = c.get("/api/results").json()
    (task,) = d["tasks"]
    assert task["task"] == "solo" and {r["agent"] for r in task["rows"]} == {"random", "threshold:0.2"}
    values = [r["value"] for r in task["rows"]]
    assert values == sorted(values, reverse=True)
    card = json.loads((reports / "card_random.json").read_text())
    (row,) = [r for r in task["rows"] if r["agent"] == "random"]
    assert row["value"] == card["tasks"][0]["headline"]["value"] and [row["lo"], row["hi"]] == card["tasks"][0][
        "headline"]["ci95"]
    (rep,) = d["reports"]
    report = json.loads((reports / "eval.json").read_text())
    assert rep["kind"] == "evaluate"
    assert sorted((r["value"], r["agent"]) for r in rep["rows"]) == sorted((a["win_rate"], a["spec"])
                                                                          for a in report["agents"])
    assert [r["value"] for r in rep["rows"]] == sorted((r["value"] for r in rep["rows"]), reverse=True)
    assert d["skipped"] == [["notes.json", "neither a score card nor a league / evaluate report"]]


def test_results_of_the_shipped_league():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    with TestClient(create_app(results=docs)) as c:
        d = c.get("/api/results").json()
    (rep,) = [r for r in d["reports"] if r["file"] == "heuristics_league.json"]
    assert rep["kind"] == "league" and len(rep["rows"]) >= 5
    # ranked as lama-dice evaluate --league ranks the same file (by rating, not by win rate), and saying so
    league = json.loads((docs / "heuristics_league.json").read_text())
    by_rating = sorted(league["agents"], key=lambda a: -(a["mu"] - 3 * a["sigma"]))
    assert [r["agent"] for r in rep["rows"]] == [a["spec"] for a in by_rating]
    assert rep["ranked_by"].startswith("rating (OpenSkill mu - 3 sigma), as lama-dice evaluate --league ranks it")
    from lama_dice.cli.web.results import _report

    agents = [{"spec": "a", "win_rate": 0.6, "ordinal": 1.0}, {"spec": "b", "win_rate": 0.5, "ordinal": 2.0}]
    assert [r["agent"] for r in _report({"league": True, "agents": agents}, "x.json")["rows"]] == ["b", "a"]
    evaluated = _report({"agents": agents}, "y.json")  # an evaluation: by win rate
    assert [r["agent"] for r in evaluated["rows"]] == ["a", "b"] and evaluated["ranked_by"] == "win rate"


# ---------------------------------------------------------------- the store's bounds
def test_store_drops_finished_and_abandoned_games_and_is_bounded():
    now = [0.0]
    store = GameStore(max_games=3, finished_ttl_s=10, idle_ttl_s=100, clock=lambda: now[0])
    games = []
    for i in range(3):
        now[0] = float(i)
        games.append(store.new(2, 0, ["random"], seed=i))
    g = games[1]
    while not g.finished:  # finish one by quitting every round
        g.act(A.QUIT)
    now[0] = 3.0
    store.get(games[0].id)  # touched after the others: the most recently used
    new = store.new(2, 0, ["random"], seed=9)  # full: the finished one makes room, though not the oldest
    assert len(store) == 3 and {games[0].id, games[2].id, new.id} == set(store._games)
    now[0] = 4.0
    newer = store.new(2, 0, ["random"], seed=10)  # full of unfinished games: the least recently used goes
    assert len(store) == 3 and set(store._games) == {games[0].id, new.id, newer.id}
    with pytest.raises(NotFoundError, match="least recently used when 3 games were held"):
        store.get(games[2].id)
    now[0] = 50.0
    store.get(games[0].id)  # touched: kept
    now[0] = 110.0
    assert store.prune() == 2 and len(store) == 1
    now[0] = 500.0
    assert store.prune() == 1 and len(store) == 0


def test_a_full_store_never_locks_anyone_out(client):
    client.app.state.games.max_games = 8
    made = [client.post("/api/games", json={"players": 2, "opponents": ["random"], "seed": i}) for i in range(20)]
    assert [r.status_code for r in made] == [201] * 20
    assert len(client.app.state.games) == 8
    assert client.get(f"/api/games/{made[-1].json()['id']}").status_code == 200
    assert client.get(f"/api/games/{made[0].json()['id']}").status_code == 404  # evicted, least recently used


# ---------------------------------------------------------------- the command
def test_serve_refuses_bad_folders_and_a_taken_port(tmp_path, capsys):
    assert main(["serve", "--records", str(tmp_path / "nope")]) == 2
    assert "--records" in capsys.readouterr().err
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        assert main(["serve", "--port", str(s.getsockname()[1])]) == 2
        err = capsys.readouterr().err
        assert "cannot listen on 127.0.0.1" in err and err.count("\n") == 1
    finally:
        s.close()
    assert main(["serve", "--agents", "python:nowhere.py:X"]) == 2


def test_serve_prints_the_url_says_localhost_and_stops_on_ctrl_c(tmp_path):
    from lama_dice.cli.web.loadtest import spawn_server

    with spawn_server() as (url, proc):
        import urllib.request

        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/api/info", timeout=30) as r:
            assert json.loads(r.read())["version"]
    assert proc.returncode == 0
    assert "stopped" in proc.stderr.read()


def test_serve_help_runs_without_the_extra_imported():
    out = subprocess.run([sys.executable, "-m", "lama_dice", "serve", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "127.0.0.1" in out.stdout


def test_results_rank_per_suite_version_and_lower_is_better(reports, tmp_path):
    from lama_dice.cli.web.results import load_results

    card = json.loads((reports / "card_random.json").read_text())
    task = card["tasks"][0]
    for i, v in enumerate([0.3, 0.6, 0.45]):  # an exploitability-like task: the lowest value ranks first
        low = dict(card, agent=f"a{i}", tasks=[dict(task, name="exploit", about="win rate (lower is better)",
                                                    headline=dict(task["headline"], value=v))])
        (tmp_path / f"low{i}.json").write_text(json.dumps(low))
    (tmp_path / "old.json").write_text(json.dumps(dict(card, suite="lama-dice-suite/0")))
    (tmp_path / "new.json").write_text(json.dumps(card))
    d = load_results(tmp_path)
    by = {(t["suite"], t["task"]): t for t in d["tasks"]}
    assert set(by) == {(card["suite"], "exploit"), (card["suite"], task["name"]), ("lama-dice-suite/0", task["name"])}
    ex = by[(card["suite"], "exploit")]
    assert ex["lower_is_better"] and [r["agent"] for r in ex["rows"]] == ["a0", "a2", "a1"]


def test_the_api_example_of_docs_web_md_runs(capsys):
    import re
    from pathlib import Path

    from lama_dice.cli.web.loadtest import spawn_server

    text = (Path(__file__).resolve().parents[1] / "docs" / "web.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert 'base_url="http://127.0.0.1:8000"' in example
    with spawn_server() as (url, _):
        scope: dict = {}
        exec(example.replace("http://127.0.0.1:8000", url), scope)
    assert replay(scope["record"])["valid"] and scope["state"]["game_over"]
    assert "'place': 1" in capsys.readouterr().out


# ---------------------------------------------------------------- hardening (issue 28): no 5xx, every input bounded
def _no_server_paths(client, r):
    assert str(client.folder) not in r.text and "/tmp" not in r.text, r.text


@pytest.mark.parametrize(("name", "status", "words"), [
    ("%00", 400, "not a record name"),
    ("a" * 5000, 400, "(5000 chars)"),
    ("run1/" + "b" * 300 + ".json", 400, "not a record name"),
    ("x%0Ay.json", 404, "Not Found"),  # no route matches a name with a line break
    ("..", 404, "Not Found"),
    ("run1/../../secret.json", 404, "Not Found"),  # the client drops the dot segments: /api/secret.json
    ("%2e%2e/secret.json", 404, "no record"),
    ("/etc/passwd", 404, "no record"),
    ("run1\\..\\game.json", 404, "no record"),
    ("loop.json", 404, "no record"),
    ("folder.json", 404, "no record"),
    ("notes.txt", 404, "no record"),
    ("run1/%2e/game.json", 404, "no record"),
])
def test_record_names_are_checked_before_the_file_system_sees_them(client, name, status, words):
    records = client.folder / "records"
    (records / "loop.json").symlink_to(records / "loop.json")
    (records / "folder.json").mkdir()
    (records / "notes.txt").write_text("{}")
    (records / "run1").mkdir()
    (records / "run1" / "game.json").write_text("{}")
    r = client.get(f"/api/records/{name}")
    assert r.status_code == status, r.text
    assert words in r.json()["error"] and "\n" not in r.json()["error"]
    assert len(r.json()["error"]) < 300
    _no_server_paths(client, r)


HUGE_RECORD = '{"format": "lama-dice-record/1", "players": ' + "9" * 100_000 + ', "rounds": []}'


@pytest.mark.parametrize("text", [HUGE_RECORD, '{"format": "lama-dice-record/1", "players": NaN, "rounds": []}',
                                  '{"players": Infinity}', "[" * 50_000, b"\xff\xfe{}"])
def test_records_with_unbounded_numbers_get_422_not_500(client, capsys, text):
    path = client.folder / "records" / "bad.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, expected = _cli_replay(path, capsys)
    assert code == 1
    r = client.get("/api/records/bad.json")
    assert r.status_code == 422 and "\n" not in r.json()["error"]
    assert r.json()["error"] == expected["error"].replace(str(path), "bad.json")  # the name as listed, not the path
    _no_server_paths(client, r)
    r = client.post("/api/replay?name=bad.json", content=path.read_bytes())
    assert r.status_code == 422 and r.json()["replay"]["valid"] is False
    assert r.json()["error"] == expected["error"].replace(str(path), "bad.json")


@pytest.mark.parametrize(("url", "limit"), [("/api/games", 64 * 1024), ("/api/games/NOPE/act", 64 * 1024),
                                            ("/api/info", 64 * 1024), ("/api/replay", 5 * 1024 * 1024)])
def test_every_route_bounds_its_body_with_413(client, url, limit):
    held = len(client.app.state.games)
    r = client.post(url, content=b" " * (limit + 1), headers={"Content-Type": "application/json"})
    assert r.status_code == 413, r.text
    assert "larger than" in r.json()["error"] and "\n" not in r.json()["error"]
    assert len(client.app.state.games) == held
    if url == "/api/games":  # just under the limit: read, and refused as the JSON it is
        r = client.post(url, content=b" " * (limit - 2) + b"{}", headers={"Content-Type": "application/json"})
        assert r.status_code == 201


def test_a_100_mb_body_is_refused_without_being_read():
    """The middleware itself: a declared length is refused before any read; a streamed body at the limit."""
    import asyncio

    from lama_dice.cli.web.app import BodyLimit

    async def run(headers, chunks):
        reads, sent = [], []
        chunk = b"x" * 2**20

        async def receive():
            reads.append(1)
            more = len(reads) < chunks
            return {"type": "http.request", "body": chunk, "more_body": more}

        async def send(message):
            sent.append(message)

        async def app(scope, receive, send):  # a route that reads its whole body, then answers 200
            while (await receive()).get("more_body"):
                pass
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"read it all"})

        scope = {"type": "http", "path": "/api/games", "method": "POST", "headers": headers}
        await BodyLimit(app, limit=64 * 1024)(scope, receive, send)
        return len(reads), [m.get("status") for m in sent if m["type"] == "http.response.start"], sent

    reads, statuses, sent = asyncio.run(run([(b"content-length", str(100 * 2**20).encode())], 100))
    assert reads == 0 and statuses == [413]
    assert json.loads(sent[-1]["body"])["error"].startswith("the request body is larger than 64 KiB")
    reads, statuses, _ = asyncio.run(run([], 100))  # no length given (chunked): counted as it comes
    assert reads == 1 and statuses == [413]
    reads, statuses, _ = asyncio.run(run([(b"content-length", b"10")], 100))  # a length that lies
    assert reads == 1 and statuses == [413]
    reads, statuses, _ = asyncio.run(run([(b"content-length", b"ten")], 1))
    assert reads == 0 and statuses == [400]


@pytest.mark.parametrize(("content", "words"), [
    (b"{not json", "body: invalid JSON at line 1 column 2: Expecting property name enclosed in double quotes"),
    (b'{"seed": ' + b"9" * 5000 + b"}", "body: an integer of 5,000 digits (integers are at most 2**63 - 1)"),
    (b"\xff{}", "body is not UTF-8 text"),
    (b"[" * 20_000 + b"]" * 20_000, "body: nested more than 64 levels deep"),
    (b'{"seed": 1, "seed": 2}', "body: the key 'seed' is given twice in one object"),
    (b'{"seed": NaN}', "body: NaN is not a JSON number"),
    (b'{"seed": 9007199254740992}', "seed: Input should be less than or equal to 9007199254740991"),
])
def test_a_body_that_is_not_json_gets_422_as_docs_web_md_says(client, content, words):
    r = client.post("/api/games", content=content, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"].startswith(words), r.json()["error"]
    assert "| 422 | a malformed body (not JSON" in (Path(__file__).resolve().parents[1] / "docs" / "web.md").read_text()


def test_integral_json_numbers_are_integers(client):
    state = client.post("/api/games", json={"players": 2.0, "opponents": ["random"], "seed": 3.0}).json()
    assert len(state["names"]) == 2
    r = client.post(f"/api/games/{state['id']}/act", json={"action": float(A.ROLL), "seq": 0.0})
    assert r.status_code == 200 and r.json()["seq"] == 1


def test_a_server_error_is_one_json_line_naming_no_file():
    app = create_app()

    @app.get("/api/boom")
    def boom() -> None:
        raise RuntimeError("/srv/secret/path went wrong")

    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/api/boom")
    assert r.status_code == 500 and r.json() == {"error": "internal error: the server's log has the details"}


def test_the_openapi_schema_documents_every_status_and_body(client):
    spec = client.get("/openapi.json").json()
    ops = {(m.upper(), p): op for p, item in spec["paths"].items() for m, op in item.items()}
    expected = {
        ("POST", "/api/games"): {"201", "400", "413", "422"},
        ("GET", "/api/games/{game_id}"): {"200", "400", "404", "413", "422"},
        ("POST", "/api/games/{game_id}/act"): {"200", "400", "404", "409", "413", "422"},
        ("GET", "/api/records/{path}"): {"200", "400", "404", "413", "422"},
        ("POST", "/api/replay"): {"200", "400", "413", "422"},
    }
    for key, statuses in expected.items():
        assert set(ops[key]["responses"]) == statuses, key
    for key, op in ops.items():
        for status, answer in op["responses"].items():
            schema = answer["content"]["application/json"]["schema"]
            assert schema, (key, status)
            if status >= "400":
                name = schema["$ref"].rsplit("/", 1)[-1]
                assert "error" in spec["components"]["schemas"][name]["required"], (key, status)
    body = ops[("POST", "/api/replay")]["requestBody"]
    assert body["required"] and {"application/json", "text/plain"} <= set(body["content"])
    formats = body["content"]["application/json"]["schema"]["properties"]["format"]["enum"]
    assert formats == ["lama-dice-record/1", "lama-dice-record/2"]
    assert ops[("POST", "/api/games")]["responses"]["201"]["links"]["Act"]["operationId"] == "act"
    assert ops[("POST", "/api/replay")]["responses"]["422"]["content"]["application/json"]["schema"]["$ref"] \
        .endswith("/RecordErrorBody")


def test_agent_errors_name_no_server_paths():
    with TestClient(create_app(trusted_agents=("ppo:/srv/nowhere/net.zip",))) as c:
        for opponents, players, words in ((["ppo:2p"], 4, "checkpoint ppo_2p.safetensors was trained for 2 players"),
                                          (["ppo:/srv/nowhere/net.zip"], 2, "checkpoint net.zip does not exist")):
            r = c.post("/api/games", json={"players": players, "opponents": opponents})
            assert r.status_code == 400 and r.json()["error"].startswith(words), r.text
            assert "/srv" not in r.text and "pretrained/" not in r.text


def test_results_with_numbers_beyond_a_float_are_shown_without_them(tmp_path):
    big = "1e400"  # a JSON number, but no float
    (tmp_path / "card.json").write_text('{"suite": "v1", "agent": "x", "tasks": [{"name": "solo", "headline": '
                                        '{"value": ' + big + ', "ci95": [NaN, ' + big + ']}}]}')
    (tmp_path / "huge.json").write_text('{"suite": ' + "9" * 5000 + "}")  # the bounded reader refuses it
    with TestClient(create_app(results=tmp_path)) as c:
        d = c.get("/api/results").json()
    assert d["tasks"][0]["rows"][0]["value"] is None and d["tasks"][0]["rows"][0]["hi"] is None
    assert d["skipped"] == [["huge.json", "not readable JSON (an integer of 5,000 digits (integers are at most "
                                          "2**63 - 1))"]]


def test_a_real_server_refuses_a_100_mb_body_while_it_is_sent():
    """Against ``lama-dice serve``: a declared 100 MB body, and a chunked one, get 413 after a few MiB at most."""
    import re
    import socket
    import urllib.parse

    from lama_dice.cli.web.loadtest import spawn_server

    def send(sock, head, chunks):
        sock.sendall(head)
        sent = 0
        sock.settimeout(0.0)
        try:
            for chunk in chunks:
                try:
                    answer = sock.recv(65536)
                except BlockingIOError:
                    answer = b""
                if answer:
                    sock.settimeout(30.0)
                    return sent, answer_of(sock, answer)
                sock.settimeout(10.0)
                sock.sendall(chunk)
                sock.settimeout(0.0)
                sent += len(chunk)
        except OSError:  # the server closed the connection: it read no more
            pass
        sock.settimeout(30.0)
        return sent, answer_of(sock, b"")

    def answer_of(sock, answer):
        while b"\r\n\r\n" not in answer or len(answer.partition(b"\r\n\r\n")[2]) < int(
                re.search(rb"content-length: (\d+)", answer.partition(b"\r\n\r\n")[0], re.I).group(1)):
            more = sock.recv(65536)
            if not more:
                break
            answer += more
        return answer

    mib = b"x" * 2**20
    with spawn_server() as (url, _proc):
        host, port = urllib.parse.urlsplit(url).hostname, urllib.parse.urlsplit(url).port
        with socket.create_connection((host, port), timeout=30) as s:
            head = (f"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain\r\n"
                    f"Content-Length: {100 * 2**20}\r\n\r\n").encode()
            sent, answer = send(s, head, [mib] * 100)
        assert answer.startswith(b"HTTP/1.1 413") and b"larger than 5 MiB" in answer
        assert sent <= 8 * 2**20
        with socket.create_connection((host, port), timeout=30) as s:
            head = (f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n").encode()
            sent, answer = send(s, head, [b"%x\r\n%s\r\n" % (len(mib), mib)] * 100)
        assert answer.startswith(b"HTTP/1.1 413") and b"larger than 64 KiB" in answer
        assert sent <= 8 * 2**20


@pytest.mark.parametrize(("url", "body"), [("act", '{"action": %s}'), ("act", '{"action": 0, "seq": %s}'),
                                           ("", '{"players": %s}')])
def test_huge_numbers_in_a_body_get_a_short_one_line_refusal(client, url, body):
    state = _new(client)
    path = f"/api/games/{state['id']}/{url}" if url else "/api/games"
    r = client.post(path, content=(body % ("9" * 4200)).encode(), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text  # the bounded reader refuses the body before any model sees it
    assert r.json()["error"] == "body: an integer of 4,200 digits (integers are at most 2**63 - 1)"
    assert client.get(f"/api/games/{state['id']}").json() == state
