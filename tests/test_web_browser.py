"""The web app in a real browser: Debian's headless Chromium driven by Selenium (``make test`` installs it).

Whole two-player games against ``threshold:0.2`` played by clicking the
buttons, on a desktop (1280x800, one move by keyboard) and on a phone (390x844
with touch emulation): the labels read as the cards print them, the record
names its players and replays, the viewer keeps the result for the end; an
invalid record shows ``lama-dice replay``'s message; no console errors on any
page.  On the phone no page scrolls sideways, no text is under 12 px (SVG text
scaled as drawn), every touch target is at least 44 px and the key hints give
way to touch wording.  The API page renders from the server's own files.
Screenshots at both sizes are kept in ``test-artifacts/``
(``LAMA_DICE_ARTIFACTS`` to change); docs/images/web-play.png and
web-phone.png are copies of two of them.
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


DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    records = tmp_path_factory.mktemp("records")
    results = tmp_path_factory.mktemp("results")
    shutil.copy(DOCS / "heuristics_league.json", results / "league.json")  # a league report: the widest table
    with spawn_server("--records", str(records), "--results", str(results)) as (url, _):
        yield url, records


def chrome(downloads: Path, phone: bool):
    """Headless Chromium: a 1280x800 desktop window, or a 390x844 phone (touch: no hover, a coarse pointer)."""
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions",
                *(() if phone else ("--window-size=1280,800",))):
        opts.add_argument(arg)
    if phone:
        opts.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 390, "height": 844,
                                                                           "pixelRatio": 2.0, "touch": True}})
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    if not phone:
        d.set_window_rect(width=1280, height=800)
    d.downloads = downloads
    return d


def running(tmp_path_factory, phone: bool):
    """A browser for a module's tests, quit at the end."""
    d = chrome(tmp_path_factory.mktemp("downloads-phone" if phone else "downloads"), phone=phone)
    try:
        yield d
    finally:
        d.quit()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    yield from running(tmp_path_factory, phone=False)


@pytest.fixture(scope="module")
def phone(tmp_path_factory):
    yield from running(tmp_path_factory, phone=True)


def console_errors(d):
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE"]


def wait(d, cond, timeout=30):
    return WebDriverWait(d, timeout).until(cond)


def choice_buttons(d):
    return d.find_elements(By.CSS_SELECTOR, "#choices button")


def game_over(d):
    return d.find_element(By.ID, "result").is_displayed()


def start_label(d):
    """The table's "start: NAME" text, which must never be cut ("start: P1 thresho…")."""
    texts = d.execute_script("return [...document.querySelectorAll('#table svg text')].map(t => t.textContent)")
    (start,) = [t for t in texts if t.startswith("start: ")]
    assert "\u2026" not in start, start
    return start


def click_and_wait(d, button):
    button.click()
    wait(d, EC.staleness_of(button))
    wait(d, lambda d: game_over(d) or any(b.is_enabled() for b in choice_buttons(d)))


#: A discard or take button: faces as the cards print them (L, 1..6).
LABEL = re.compile(r"Take [L1-6]|Discard (nothing|([L1-6]|[2-6] \u00d7 [L1-6])(, ([L1-6]|[2-6] \u00d7 [L1-6]))*)")


def start_game(d, url, seed):
    """Open the Play page, pick threshold with 0.2 (the picker's number field) and a seed, start the game."""
    from selenium.webdriver.support.ui import Select

    d.get(url + "/")
    wait(d, lambda d: d.find_element(By.ID, "opp-1").get_attribute("value"))
    assert d.find_element(By.ID, "opp-1").tag_name == "select"  # a picker, not free text
    Select(d.find_element(By.ID, "opp-1")).select_by_value("threshold")
    arg = d.find_element(By.ID, "opp-1-arg")
    assert arg.is_displayed() and arg.get_attribute("type") == "number"
    assert "a number 0\u20131" in d.find_element(By.ID, "opp-1-arg-label").text
    arg.clear()
    arg.send_keys("0.2")
    assert not d.find_element(By.ID, "opp-1-other").is_displayed()
    d.find_element(By.ID, "seed").send_keys(str(seed))
    d.find_element(By.ID, "start").click()
    wait(d, lambda d: d.find_element(By.ID, "game").is_displayed())


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
        start_label(d)
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
            assert all(LABEL.fullmatch(n) for n in names), names  # faces as printed: "Take L", never "Take l"
            assert len(names) > 1, names  # a single choice is played for the person, never offered
            last = d.find_elements(By.CSS_SELECTOR, "#events li")[-1].text
            assert last.startswith("You: rolls "), last  # your own roll is listed, and is the table's caption
            svg_text = d.execute_script("return [...document.querySelectorAll('#table svg text')]"
                                        ".map(t => t.textContent).join(' ')")
            assert "You: rolls " in svg_text, svg_text
            target = buttons[0]
        click_and_wait(d, target)
        moves += 1
        assert moves < 2000
    return moves


def test_play_a_whole_game_download_the_record_and_watch_it(server, browser):
    url, records = server
    d = browser
    pick = random.Random(7)
    start_game(d, url, 5)
    assert d.find_element(By.CSS_SELECTOR, "#table svg text").text  # the table is drawn
    assert d.execute_script("return document.querySelector('#table svg').dataset.layout") is None  # the wide one
    assert d.find_element(By.CSS_SELECTOR, ".keys-only").is_displayed()  # a keyboard: the key hints
    assert not d.find_element(By.CSS_SELECTOR, ".touch-only").is_displayed()
    outcomes = [o.text for o in d.find_elements(By.CSS_SELECTOR, "#choices .outcome")]
    assert len(outcomes) == 2 and outcomes[0].startswith("→ matches nothing") and outcomes[1].startswith("→ stop")
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
    assert rec["format"] == "lama-dice-record/2"  # the record says who played
    assert rec["about"]["names"] == ["You", "P1 threshold:0.2"] and rec["about"]["agents"] == [None, "threshold:0.2"]
    assert rec["about"]["seed"] == 5
    assert console_errors(d) == []
    total = sum(len(r["turns"]) for r in rec["rounds"]) + len(rec["rounds"])
    # "Watch it again": the game just played, in the viewer
    d.find_element(By.ID, "watch-link").click()
    wait(d, lambda d: d.find_element(By.ID, "where").text == f"step 1 of {total}")
    assert d.find_element(By.ID, "title").text.startswith("Your game: 2 players")
    assert d.find_element(By.ID, "about").text.startswith("Played by You, P1 threshold:0.2 (agents: a person, "
                                                         "threshold:0.2); seed 5; written by lama-dice ")
    assert "You" in d.find_element(By.CSS_SELECTOR, "#table svg title").get_attribute("textContent")
    # the viewer: upload the record, step forward and back, play, link to a turn
    d.get(url + "/watch")
    wait(d, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    d.find_element(By.ID, "upload").send_keys(str(files[0]))
    wait(d, lambda d: d.find_element(By.ID, "viewer").is_displayed())
    where = d.find_element(By.ID, "where")
    assert where.text == f"step 1 of {total}"
    # the result waits for the end of the replay: no spoiler on opening
    assert d.find_element(By.ID, "result-panel").is_displayed()
    assert not d.find_element(By.ID, "result-table").is_displayed()
    assert d.find_element(By.ID, "show-result").is_displayed()
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
    assert not d.find_element(By.ID, "result-table").is_displayed()  # still hidden mid-replay
    d.find_element(By.ID, "last").click()
    assert where.text == f"step {total} of {total}"
    assert d.find_element(By.ID, "result-table").is_displayed()
    assert not d.find_element(By.ID, "show-result").is_displayed()
    totals = [int(t.text) for t in d.find_elements(By.CSS_SELECTOR, "#result-table td.num")]
    assert totals == res["totals"]
    d.find_element(By.ID, "first").click()
    assert not d.find_element(By.ID, "result-table").is_displayed()
    d.find_element(By.ID, "show-result").click()  # on request
    assert d.find_element(By.ID, "result-table").is_displayed()
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


def test_results_page_without_a_folder(browser):
    d = browser
    with spawn_server() as (url, _):
        d.get(url + "/results")
        wait(d, lambda d: d.find_element(By.ID, "intro").text)
        assert "--results DIR" in d.find_element(By.ID, "intro").text
        assert console_errors(d) == []


def test_results_page_with_a_league_on_a_desktop(server, browser):
    url, _ = server
    d = browser
    d.get(url + "/results")
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#reports table"))
    assert "1 league / evaluate report" in d.find_element(By.ID, "intro").text
    assert d.execute_script("return document.documentElement.scrollWidth <= innerWidth")
    d.save_screenshot(str(ARTIFACTS / "web-results.png"))
    assert console_errors(d) == []


# ---------------------------------------------------------------- the phone
#: Every element a finger may need to hit.
TARGETS = "button, select, input, a, summary"

PAGE_CHECKS = """
const out = {width: innerWidth, scroll: document.documentElement.scrollWidth, small: [], tiny: [], hints: [],
             wide: []};
const seen = el => {
  const r = el.getBoundingClientRect(), st = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && !el.closest('.sr-only');
};
const what = el => `${el.tagName}#${el.id}.${el.className} "${(el.textContent || el.value || '').trim().slice(0, 30)}"`;
for (const el of document.querySelectorAll('body *')) {
  if (el.closest('svg') || !seen(el)) continue;
  const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  const size = parseFloat(getComputedStyle(el).fontSize);
  if (own && size < 12) out.small.push(`${what(el)}: ${size}px`);
  const r = el.getBoundingClientRect();
  if (r.right > innerWidth + 0.5 && !el.closest('.scroll, .filelist')) out.wide.push(`${what(el)}: ${r.right}`);
}
for (const svg of document.querySelectorAll('svg')) {
  if (!seen(svg)) continue;
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  for (const t of svg.querySelectorAll('text')) {
    const size = parseFloat(t.getAttribute('font-size')) * scale;
    if (t.textContent.trim() && size < 12) out.small.push(`svg text "${t.textContent}": ${size.toFixed(1)}px`);
  }
}
for (const el of document.querySelectorAll(arguments[0])) {
  if (!seen(el) || el.type === 'hidden') continue;
  const r = el.getBoundingClientRect();
  if (r.height < 44 || r.width < 44) out.tiny.push(`${what(el)}: ${r.width.toFixed(0)}x${r.height.toFixed(0)}`);
}
for (const el of document.querySelectorAll('.keys-only')) if (seen(el)) out.hints.push(el.textContent);
return out;
"""


def phone_checks(d, page):
    """On this page: no sideways scrolling, no text under 12 px, no touch target under 44 px, no key hints."""
    out = d.execute_script(PAGE_CHECKS, TARGETS)
    assert out["width"] == 390
    assert out["scroll"] <= out["width"], f"{page} scrolls sideways to {out['scroll']} px: {out.get('wide')}"
    assert out["small"] == [], f"{page}: text under 12 px: {out['small'][:8]}"
    assert out["tiny"] == [], f"{page}: touch targets under 44 px: {out['tiny'][:8]}"
    assert out["hints"] == [], f"{page}: key hints on a touch screen: {out['hints']}"
    header = d.find_element(By.CSS_SELECTOR, "header.top").rect
    assert header["x"] == 0 and header["width"] == 390  # the header bar spans the width
    h1 = d.find_element(By.CSS_SELECTOR, "header.top h1")
    assert h1.size["height"] < 40 and h1.text == "lama-dice"  # one line: "lama-dice" does not wrap


def test_play_watch_and_results_on_a_phone(server, phone):
    url, _ = server
    d = phone
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    d.get(url + "/")
    wait(d, lambda d: d.find_element(By.ID, "opp-1").get_attribute("value"))
    assert d.execute_script("return [innerWidth, innerHeight]") == [390, 844]
    phone_checks(d, "the Play page's set-up")
    start_game(d, url, 11)
    assert d.execute_script("return document.querySelector('#table svg').dataset.layout") == "compact"
    assert d.find_element(By.CSS_SELECTOR, ".touch-only").is_displayed()  # touch wording instead of keys
    assert start_label(d) == "start: You"
    phone_checks(d, "the Play page")
    d.save_screenshot(str(ARTIFACTS / "web-phone-play.png"))
    pick = random.Random(3)
    moves = 0
    while not game_over(d):  # taps, as a finger would (the buttons are the targets checked above)
        buttons = [b for b in choice_buttons(d) if b.is_enabled()]
        names = [b.accessible_name for b in buttons]
        assert names, "no choice offered"
        assert start_label(d) in ("start: You", "start: P1 threshold:0.2")
        if names not in (["Roll", "Quit"], ["Next round"]):
            assert all(LABEL.fullmatch(n) for n in names) and len(names) > 1, names
        if moves == 6:
            phone_checks(d, "the Play page mid-game")
            d.save_screenshot(str(ARTIFACTS / "web-phone-midgame.png"))
        target = buttons[1] if names == ["Roll", "Quit"] and pick.random() < 0.25 else buttons[0]
        click_and_wait(d, target)
        moves += 1
        assert moves < 2000
    phone_checks(d, "the Play page at the game's end")
    d.save_screenshot(str(ARTIFACTS / "web-phone-result.png"))
    gid = d.execute_script("return new URL(document.getElementById('watch-link').href).searchParams.get('game')")
    # Watch: the game just played, its names, the result kept for the end
    d.find_element(By.ID, "watch-link").click()
    wait(d, lambda d: d.find_element(By.ID, "where").text.startswith("step 1 of "))
    assert d.find_element(By.ID, "about").text.startswith("Played by You, P1 threshold:0.2")
    assert not d.find_element(By.ID, "result-table").is_displayed()
    for _ in range(4):
        d.find_element(By.ID, "forward").click()
    phone_checks(d, "the Watch page")
    d.save_screenshot(str(ARTIFACTS / "web-phone-watch.png"))
    d.find_element(By.ID, "last").click()
    assert d.find_element(By.ID, "result-table").is_displayed()
    phone_checks(d, "the Watch page at the end")
    # Results: the league report's table scrolls inside its card; the page does not
    d.get(url + "/results")
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#reports table"))
    phone_checks(d, "the Results page")
    # a table cut by the screen says that it scrolls (a note above it, a shadow at its edge); one that fits does not
    for wrapper in d.find_elements(By.CSS_SELECTOR, "#reports .scroll"):
        over = d.execute_script("return arguments[0].scrollWidth > arguments[0].clientWidth + 1", wrapper)
        noted = d.execute_script("const p = arguments[0].previousElementSibling; "
                                 "return !!p && p.classList.contains('scroll-note')", wrapper)
        assert over == noted == ("overflows" in wrapper.get_attribute("class")), (over, noted)
    assert d.find_elements(By.CSS_SELECTOR, "#reports .scroll.overflows"), "no Results table is wider than a phone"
    d.save_screenshot(str(ARTIFACTS / "web-phone-results.png"))
    # the API page, from the server's own files (no CDN), with the way back to the app
    d.get(url + "/docs")
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
    assert d.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text.startswith("lama-dice")
    back = d.find_element(By.CSS_SELECTOR, "#back a")
    assert back.get_attribute("href") == url + "/" and back.is_displayed() and back.size["height"] >= 44
    assert console_errors(d) == []
    # the record of the game played on the phone names its players and replays
    import urllib.request

    with urllib.request.urlopen(f"{url}/api/games/{gid}/record") as r:
        rec = json.loads(r.read())
    assert rec["about"]["names"] == ["You", "P1 threshold:0.2"] and replay(rec)["game_over"]


def test_the_api_page_works_from_the_servers_files(server, browser):
    url, _ = server
    d = browser
    d.get(url + "/docs")
    wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, ".swagger-ui .info .title"))
    assert d.find_element(By.CSS_SELECTOR, ".swagger-ui .info .title").text.startswith("lama-dice")
    scripts = d.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert scripts and all(s.startswith(url) for s in scripts), scripts  # nothing from the internet
    assert console_errors(d) == []


def test_the_start_line_is_never_cut_mid_name(server, browser):
    """The table's header names the start player whole, or by seat ("P5"), as the pictures do: never "P5 thres…"."""
    url, _ = server
    browser.get(url + "/")
    got = browser.execute_script("return [startLine('P5 threshold:0.35', 30), startLine('P5 threshold:0.35', 16), "
                                 "startLine('You', 26)]")
    assert got == ["start: P5 threshold:0.35", "start: P5", "start: You"]


def test_watch_lists_the_records_it_skipped_with_the_reason(browser, tmp_path):
    from lama_dice.cli.web.app import UNLISTED_NAME
    from lama_env.engine import LamaGame
    from lama_env.safetext import safe_text

    text = json.dumps(LamaGame(2, seed=0).to_record())
    folder = os.fsencode(tmp_path)
    for name in (b"ok.json", b"bad\xff.json", b"tab\t.json"):
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(text)
    with spawn_server("--records", str(tmp_path)) as (url, _):
        d = browser
        d.get(url + "/watch")
        wait(d, lambda d: d.find_element(By.ID, "files").text)
        assert d.find_element(By.ID, "files").text == "ok.json"
        wait(d, lambda d: d.find_element(By.ID, "skipped").text)
        lines = d.find_element(By.ID, "skipped").text.splitlines()
        shown = sorted(safe_text(os.fsdecode(n)) for n in (b"bad\xff.json", b"tab\t.json"))
        assert lines == ["Not listed", *(f"{n}: {UNLISTED_NAME}" for n in shown)]
        assert console_errors(d) == []
