"""The web app in a real browser: Debian's headless Chromium driven by Selenium (``make test`` installs it).

A whole two-player game against ``threshold:0.2`` played by clicking the
buttons (one move by keyboard), the record downloaded and replayed, then
opened in the viewer and stepped through; an invalid record shows
``lama-dice replay``'s message; no console errors on any page.  The table's
screenshot is kept in ``test-artifacts/`` (``LAMA_DICE_ARTIFACTS`` to change).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the web extra: pip install -e '.[web]' (make test installs it)")
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (the test extra)")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from lama_dice.cli.main import main  # noqa: E402
from lama_dice.cli.web.loadtest import spawn_server  # noqa: E402
from lama_env.record import replay  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                                reason="needs Debian's chromium and chromium-driver (make chromium installs them)")
ARTIFACTS = Path(os.environ.get("LAMA_DICE_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    records = tmp_path_factory.mktemp("records")
    with spawn_server("--records", str(records)) as (url, _):
        yield url, records


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium.webdriver.chrome.service import Service

    downloads = tmp_path_factory.mktemp("downloads")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900", "--disable-extensions"):
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.downloads = downloads
    try:
        yield d
    finally:
        d.quit()


def console_errors(d):
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def wait(d, cond, timeout=30):
    return WebDriverWait(d, timeout).until(cond)


def choice_buttons(d):
    return d.find_elements(By.CSS_SELECTOR, "#choices button")


def game_over(d):
    return d.find_element(By.ID, "result").is_displayed()


def click_and_wait(d, button):
    button.click()
    wait(d, EC.staleness_of(button))
    wait(d, lambda d: game_over(d) or any(b.is_enabled() for b in choice_buttons(d)))


def play_by_clicking(d, pick):
    """Click through a whole game; return how many moves were made."""
    moves = 0
    keyboard_used = False
    while not game_over(d):
        buttons = [b for b in choice_buttons(d) if b.is_enabled()]
        names = [b.accessible_name for b in buttons]
        if names == ["Next round"]:
            click_and_wait(d, buttons[0])
            continue
        assert names, "no choice offered"
        if names == ["Roll", "Quit"]:
            if moves >= 4 and not (ARTIFACTS / "web-play.png").exists():  # mid-game: the page for docs/images
                d.find_element(By.TAG_NAME, "main").screenshot(str(ARTIFACTS / "web-play.png"))
            points = int(d.execute_script("return document.querySelector('#table svg title').textContent")
                         .split("You: ")[1].split(" points")[0].rsplit(", ", 1)[1])
            target = buttons[0] if points > 8 or pick.random() < 0.3 else buttons[1]
            if not keyboard_used and target is buttons[0]:
                d.switch_to.active_element.send_keys("r")  # the keyboard works too
                wait(d, EC.staleness_of(buttons[0]))
                wait(d, lambda d: game_over(d) or any(b.is_enabled() for b in choice_buttons(d)))
                keyboard_used = True
                moves += 1
                continue
        else:
            assert all(n.startswith(("Discard ", "Take ")) for n in names), names
            target = buttons[0]
        click_and_wait(d, target)
        moves += 1
        assert moves < 2000
    return moves


def test_play_a_whole_game_download_the_record_and_watch_it(server, browser):
    url, records = server
    d = browser
    pick = random.Random(7)
    d.get(url + "/")
    wait(d, lambda d: d.find_element(By.ID, "opp-1").get_attribute("value"))
    opp = d.find_element(By.ID, "opp-1")
    opp.clear()
    opp.send_keys("threshold:0.2")
    d.find_element(By.ID, "seed").send_keys("5")
    d.find_element(By.ID, "start").click()
    wait(d, lambda d: d.find_element(By.ID, "game").is_displayed())
    names = [b.accessible_name for b in choice_buttons(d)]
    assert names == ["Roll", "Quit"]
    assert d.switch_to.active_element.accessible_name == "Roll"  # keyboard focus on the first choice
    assert "probability" in d.find_element(By.ID, "odds").text
    # one roll, then the table with the dice and the discard choices is the screenshot
    click_and_wait(d, choice_buttons(d)[0])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "web-play.png").unlink(missing_ok=True)
    d.find_element(By.ID, "table").screenshot(str(ARTIFACTS / "web-play-table.png"))
    d.save_screenshot(str(ARTIFACTS / "web-play-page.png"))
    moves = play_by_clicking(d, pick)
    assert moves > 3
    result = d.find_element(By.ID, "result-line").text
    assert re.fullmatch(r"(You win|P1 threshold:0\.2 wins|You and P1 threshold:0\.2 share the win) after \d+ rounds\.",
                        result), result
    d.save_screenshot(str(ARTIFACTS / "web-play-result.png"))
    # the record: downloaded through the page's link, replays valid
    d.find_element(By.ID, "download").click()
    deadline = time.monotonic() + 30
    files: list[Path] = []
    while time.monotonic() < deadline and not files:
        files = [p for p in d.downloads.glob("*.json")]
        time.sleep(0.2)
    assert files, "the record was not downloaded"
    rec = json.loads(files[0].read_text())
    res = replay(rec)
    assert res["valid"] and res["game_over"]
    assert main(["replay", str(files[0])]) == 0
    assert rec["players"] == 2
    assert console_errors(d) == []
    total = sum(len(r["turns"]) for r in rec["rounds"]) + len(rec["rounds"])
    # "Watch it again": the game just played, in the viewer
    d.find_element(By.ID, "watch-link").click()
    wait(d, lambda d: d.find_element(By.ID, "where").text == f"step 1 of {total}")
    assert d.find_element(By.ID, "title").text.startswith("Your game: 2 players")
    # the viewer: upload the record, step forward and back, play, link to a turn
    d.get(url + "/watch")
    wait(d, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    d.find_element(By.ID, "upload").send_keys(str(files[0]))
    wait(d, lambda d: d.find_element(By.ID, "viewer").is_displayed())
    where = d.find_element(By.ID, "where")
    assert where.text == f"step 1 of {total}"
    first_line = d.find_element(By.ID, "line").text
    for _ in range(3):
        d.find_element(By.ID, "forward").click()
    assert where.text == f"step 4 of {total}"
    assert d.find_element(By.ID, "line").text.startswith("Round 1, turn 3")
    d.find_element(By.ID, "back").click()
    assert where.text == f"step 3 of {total}"
    d.find_element(By.TAG_NAME, "body").send_keys("\ue014")  # ArrowRight
    assert where.text == f"step 4 of {total}"
    d.find_element(By.ID, "first").click()
    assert d.find_element(By.ID, "line").text == first_line
    d.find_element(By.ID, "speed").send_keys("fast")
    d.find_element(By.ID, "play").click()
    wait(d, lambda d: where.text.startswith("step 3 "), timeout=20)
    d.find_element(By.ID, "play").click()  # pause
    d.find_element(By.ID, "last").click()
    assert where.text == f"step {total} of {total}"
    totals = [int(t.text) for t in d.find_elements(By.CSS_SELECTOR, "#result-table td.num")]
    assert totals == res["totals"]
    # a link to a turn of a record under --records
    shutil.copy(files[0], records / "mine.json")
    d.get(url + "/watch?file=mine.json#step=5")
    wait(d, lambda d: d.find_element(By.ID, "where").text == f"step 5 of {total}")
    assert "mine.json" in d.find_element(By.ID, "files").text
    assert console_errors(d) == []


def test_an_invalid_record_shows_the_replay_message(server, browser, tmp_path, capsys):
    url, _ = server
    d = browser
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "lama-dice-record/1", "players": 9, "rounds": []}))
    main(["replay", str(bad)])
    expected = json.loads(capsys.readouterr().out)
    d.get(url + "/watch")
    wait(d, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    d.find_element(By.ID, "upload").send_keys(str(bad))
    wait(d, lambda d: d.find_element(By.ID, "error").text)
    assert d.find_element(By.ID, "error").text == expected["error"]
    assert not d.find_element(By.ID, "viewer").is_displayed()
    # a failed request logs a console message by the browser itself (the 422); nothing else may
    errors = [e for e in console_errors(d) if "422" not in e["message"]]
    assert errors == []


def test_results_page_without_a_folder(server, browser):
    url, _ = server
    d = browser
    d.get(url + "/results")
    wait(d, lambda d: d.find_element(By.ID, "intro").text)
    assert "--results DIR" in d.find_element(By.ID, "intro").text
    assert console_errors(d) == []
