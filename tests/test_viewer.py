"""The episode viewer (tools/viewer.py) and the recorded episodes it shows (evaluation.recording,
`--record` of tools/render.py and tools/evaluate.py), for each game.

The server runs as a real process on a free localhost port and plays short episodes of each game
with small untrained checkpoints of the project's agents, by the real simulators, beside the
reference; the endpoints are tested directly, then a headless Chromium (Debian's chromium and
chromium-driver, driven by Selenium) opens the page, steps through the episodes and the test
reads what it drew: DOM text, and the canvas by its pixels' colours.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import toml

import games

from evaluation.recording import (RecordingError, decode_plane, encode_plane, read_header, read_recording,
                                  write_recording)
from tests.conftest import REPO_ROOT

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
TINY_MODEL = {"channels": [4], "kernel_sizes": [3], "strides": [2], "hidden_size": 16}
#: a short episode of each game, and the project agent that plays it
GAMES = {
    "back_to_the_realm": ({"diy": {"treasure_num": 3, "max_step": 40}}, "agent.back_to_the_realm.ppo_agent", "agent.back_to_the_realm.ppo_config"),
    "back_to_the_realm_v2": ({"env_conf": {"map_name": "map_cherry", "map_cherry": {
        "start": [111, 83], "end": [84, 95], "buff": [57, 68], "start_random": False, "end_random": False,
        "buff_random": False, "treasure_random": True, "treasure_count": 3, "treasure_pos": [], "obstacle_random": False,
        "obstacle_id": [], "max_step": 40, "buff_cooldown": 100, "talent_cooldown": 100}}},
        "agent.back_to_the_realm_v2.ppo_agent", "agent.back_to_the_realm_v2.ppo_config"),
    "gorge_chase": ({"env_conf": {"map": [11], "map_random": False, "treasure_count": 6, "buff_count": 2,
                                  "buff_cooldown": 200, "talent_cooldown": 50, "monster_interval": 15,
                                  "monster_speedup": 500, "max_step": 40}},
                    "agent.gorge_chase.ppo_agent", "agent.gorge_chase.ppo_config"),
    "robot_vacuum": ({"env_conf": {"map": [11], "map_random": False, "robot_count": 2, "charger_count": 4,
                                   "max_step": 40, "battery_max": 200}},
                     "agent.robot_vacuum.ppo_agent", "agent.robot_vacuum.ppo_config"),
}
HERO, REFERENCE_HERO, OTHER_HERO, MONSTER = (30, 70, 230), (0, 110, 110), (20, 20, 20), (220, 40, 40)


# --- the format -----------------------------------------------------------------------------------------------

def test_a_feature_plane_round_trips_through_its_run_length_code():
    plane = np.zeros((21, 21))
    plane[3:6, 2:19] = 1.0
    plane[10, 10] = 0.37
    plane[20, 0] = -0.5
    runs = encode_plane(plane)
    assert all(isinstance(v, int) for v in runs) and len(runs) < plane.size / 4
    assert np.allclose(decode_plane(runs, plane.shape), plane)


def test_a_file_that_is_no_recording_is_refused_by_name(tmp_path):
    other = tmp_path / "x.jsonl"
    other.write_text('{"kind": "header", "format": "something else"}\n')
    with pytest.raises(RecordingError, match=f"{other}: not a recorded episode"):
        read_recording(other)
    good = write_recording(tmp_path / "y.jsonl", {"game": "g"}, [{"t": 0}])
    assert read_header(good)["game"] == "g" and read_recording(good)[1] == [{"kind": "step", "t": 0}]


# --- the server ----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """A run folder per game holding an untrained checkpoint of the project's agent (and, for the
    2024 game, a second one of another seed), with the run's config."""
    import importlib

    from agent.model import ModelConfig

    root = tmp_path_factory.mktemp("runs")
    for game, (_, agent_module, config_module) in GAMES.items():
        run = root / game
        run.mkdir()
        (run / "config.toml").write_text(toml.dumps({"app": {"app": game, "algo": "ppo"}, "model": TINY_MODEL}))
        settings = importlib.import_module(config_module).Settings(model=ModelConfig(**TINY_MODEL))
        for step, seed in ((5, 0), (6, 1)) if game == "back_to_the_realm" else ((5, 0),):
            importlib.import_module(agent_module).Agent(settings=settings, seed=seed).save_model(
                run / "ckpt" / f"{game}_ppo", step)
    return root


def checkpoint(runs: Path, game: str, step: int = 5) -> Path:
    return runs / game / "ckpt" / f"{game}_ppo" / f"model.ckpt-{step}.pkl"


def newest(runs: Path, game: str) -> str:
    """The name of a run's newest checkpoint, which a play of the run's folder plays."""
    return max((runs / game / "ckpt" / f"{game}_ppo").glob("model.ckpt-*.pkl"),
               key=lambda p: int(p.stem.split("-")[1])).stem


class Server:
    def __init__(self, url: str, process: subprocess.Popen, log: Path):
        self.url, self.process, self.log = url, process, log

    def call(self, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        try:
            with urllib.request.urlopen(urllib.request.Request(self.url + path, data=data), timeout=120) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def recording(self, path: str) -> tuple[int, dict]:
        return self.call("/api/recording?path=" + urllib.parse.quote(str(path)))


@pytest.fixture(scope="module")
def server(tmp_path_factory, runs):
    """tools/viewer.py on a free port (--port 0), its log in a file."""
    folder = tmp_path_factory.mktemp("viewer")
    log = folder / "server.log"
    with log.open("w") as err:
        process = subprocess.Popen([sys.executable, "tools/viewer.py", "--port", "0", "--runs", str(runs),
                                    "--cache", str(folder / "cache")], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                                   stderr=err, text=True)
    line = process.stdout.readline()
    if not line.startswith("viewer on http://"):
        process.kill()
        pytest.fail(f"the viewer did not start: {line!r}\n{log.read_text()}")
    yield Server(line.split()[2].rstrip("/"), process, log)
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def played(server, runs) -> dict[str, dict]:
    """Each game's short episode played through the API: {game: the play's answer}."""
    answers = {}
    for game, (usr_conf, _, _) in GAMES.items():
        status, body = server.call("/api/play", {"ckpt": str(runs / game), "usr_conf": json.dumps(usr_conf), "seed": 3})
        assert status == 200, body
        answers[game] = body
    return answers


def window(rows: list[str], hero: list[int], shape: list[int]) -> np.ndarray:
    """[z, x] free flags of the map around the hero, rows z as the feature planes index them."""
    size, r = shape[0], shape[0] // 2
    out = np.zeros((size, size), dtype=bool)
    for i in range(size):
        for j in range(size):
            z, x = hero[1] - r + i, hero[0] - r + j
            out[i, j] = 0 <= z < len(rows) and 0 <= x < len(rows[0]) and rows[z][x] != "#"
    return out


@pytest.mark.parametrize("game", list(GAMES))
def test_a_play_records_the_episode_with_what_the_policy_saw_and_the_reference_beside_it(played, runs, game):
    header, steps = read_recording(played[game]["recording"])
    result, world = header["result"], header["world"]
    assert header["game"] == game and header["policy"]["kind"] == "agent"
    assert header["episode"]["seed"] == 3 and header["policy"]["name"] == newest(runs, game)
    assert len(world["rows"]) == 128 and {len(row) for row in world["rows"]} == {128}
    assert len(world["chests"]) == result["chests_available"]
    assert result["chests_available"] > 0 or world["chargers"]  # robot_vacuum has chargers, no chests
    assert [s["t"] for s in steps] == list(range(result["steps"] + 1))
    actions = len(games.get(game).action_names)  # 16; robot_vacuum's 8 moves
    assert len(header["actions"]) == actions and set(header["policy"]["exposes"]) == {"probs", "value", "planes"}
    for step in steps:
        assert world["rows"][step["hero"][1]][step["hero"][0]] != "#"  # the hero stands on a free cell
        assert len(step["chests"]) == len(world["chests"]) and len(step["buffs"]) == len(world["buffs"])
    for step in steps[:-1]:  # each decision: a distribution over the game's actions, the chosen one in it
        assert len(step["probs"]) == actions and abs(sum(step["probs"]) - 1) < 0.01 and step["probs"][step["action"]] > 0
        assert isinstance(step["value"], float) and len(step["planes"]) == len(header["planes"]["names"])
        plane = decode_plane(step["planes"][0], header["planes"]["shape"]) > 0.5  # passable cells, rows z
        assert not (plane & ~window(world["rows"], step["hero"], header["planes"]["shape"])).any()
        assert plane[plane.shape[0] // 2, plane.shape[1] // 2]  # the hero's own cell, in the middle
    assert "action" not in steps[-1] and "reward" not in steps[0]
    assert set(header["terms"]) == set(steps[1]["terms"])
    for step in steps[1:]:
        assert step["reward"] == pytest.approx(sum(step["terms"].values()), abs=1e-3)
    events = [e for step in steps for e in step["events"]]
    assert events.count("flash") == result["flash_count"] and events.count("chest") == result["chests"]
    assert events.count("buff") == result["buff_count"] and steps[-1]["events"][-1] == result["outcome"]
    assert steps[-1]["score"] == pytest.approx(result["total_score"])

    reference, ref_steps = read_recording(played[game]["reference"])
    assert Path(played[game]["reference"]).name == header["reference"]
    assert reference["policy"]["kind"] == "reference" and reference["policy"]["exposes"] == []
    assert reference["episode"]["usr_conf"] == header["episode"]["usr_conf"] and reference["world"] == world
    assert "probs" not in ref_steps[0] and ref_steps[0]["hero"] == steps[0]["hero"]  # the same start


def test_the_monsters_of_gorge_chase_are_recorded_every_step(played):
    _, steps = read_recording(played["gorge_chase"]["recording"])
    assert all(step["monsters"] for step in steps)
    assert all(len(step["monsters"]) == 2 for step in steps if step["t"] >= 15)  # the second after monster_interval


def test_the_recording_endpoint_serves_a_recording_with_its_reference(server, played):
    status, body = server.recording(played["gorge_chase"]["recording"])
    assert status == 200
    header, steps = read_recording(played["gorge_chase"]["recording"])
    assert body["header"] == header and body["steps"] == steps
    assert body["reference"]["header"] == read_header(played["gorge_chase"]["reference"])
    status, choices = server.call("/api/choices")
    assert status == 200 and set(choices["games"]) == set(GAMES)
    assert "gorge-generated-heldout" in choices["games"]["gorge_chase"]["presets"]
    assert {run["run"] for run in choices["runs"]} == set(GAMES)


@pytest.fixture(scope="module")
def evaluated(runs, tmp_path_factory) -> tuple[Path, dict]:
    """tools/evaluate.py --record on the 2024 run (two checkpoints, two episodes): the folder and its results."""
    sys.path.insert(0, str(REPO_ROOT / "tools"))
    import evaluate

    out = tmp_path_factory.mktemp("evaluation")
    rc = evaluate.main(["--ckpt", str(runs / "back_to_the_realm"), "--usr-conf", json.dumps(GAMES["back_to_the_realm"][0]),
                        "--episodes", "2", "--workers", "1", "--quiet", "--out", str(out / "eval"),
                        "--record", str(out / "recorded")])
    assert rc == 0
    return out / "recorded", json.loads((out / "eval" / "results.json").read_text())


def test_an_evaluations_recordings_are_listed_best_first_with_the_reference_score(server, evaluated):
    folder, results = evaluated
    status, body = server.call("/api/folder?path=" + urllib.parse.quote(str(folder)))
    assert status == 200
    rows = body["episodes"]
    assert len(rows) == 6  # two checkpoints and the reference, two episodes each
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    evaluated_scores = {(Path(e["policy"]).name.removesuffix(".pkl"), e["episode"]): e["total_score"]
                        for e in results["episodes"]}
    for row in rows:
        assert row["score"] == pytest.approx(evaluated_scores[(row["policy"], row["episode"])])
        if row["kind"] == "agent":
            reference = next(r for r in rows if r["file"] == row["reference"])
            assert reference["kind"] == "reference" and reference["episode"] == row["episode"]
            assert row["reference_score"] == reference["score"]


@pytest.mark.parametrize("fields, status, message", [
    ({"ckpt": "/nonexistent/model.ckpt-3.pkl"}, 400, "--ckpt: no such file or directory: /nonexistent/model.ckpt-3.pkl"),
    ({"preset": "no-such-preset", "agent": "planner"}, 400, "unknown preset 'no-such-preset'"),
    ({"seed": "three"}, 400, "seed must be a whole number, got 'three'"),
    ({"agent": "robot"}, 400, "agent 'robot': allowed ckpt | planner"),
    ({"usr_conf": "{not json"}, 400, "--usr-conf is not valid JSON"),
])
def test_bad_input_is_answered_with_its_error_and_logged(server, fields, status, message):
    code, body = server.call("/api/play", fields)
    assert code == status and message in body["error"]
    assert message in server.log.read_text()
    assert server.call("/api/choices")[0] == 200  # still up


def test_a_failing_package_is_answered_with_its_error_and_the_server_stays_up(server, tmp_path):
    package = REPO_ROOT.parent / "shared" / "kaiwu_gorge" / "package_15.0.1"
    if not package.is_dir():
        pytest.skip(f"the official gorge_chase package is not at {package}")
    broken = tmp_path / "model.ckpt-1.pkl"
    broken.write_bytes(b"not a checkpoint")
    code, body = server.call("/api/play", {"package": str(package), "ckpt": str(broken),
                                           "usr_conf": json.dumps(GAMES["gorge_chase"][0])})
    assert code == 400 and body["error"].startswith(f"cannot load {broken} (agent_ppo/agent.py")
    for bad in (tmp_path / "absent.jsonl", broken):
        code, body = server.recording(bad)
        assert code == 400 and str(bad) in body["error"]
    assert server.call("/api/folder?path=" + urllib.parse.quote(str(tmp_path)))[0] == 400
    assert server.call("/api/choices")[0] == 200


# --- the page, in a headless browser --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        pytest.skip("no headless browser for the viewer's page tests: install it with "
                    "`apt-get install -y chromium chromium-driver` (.ci/run does)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tempfile.TemporaryDirectory()
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,1100", f"--user-data-dir={profile.name}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    yield driver
    driver.quit()
    profile.cleanup()


PIXELS = """
const canvas = document.getElementById(arguments[0]);
const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
let n = 0, sx = 0, sy = 0;
for (let i = 0; i < data.length; i += 4) {
  if (data[i] === arguments[1] && data[i + 1] === arguments[2] && data[i + 2] === arguments[3]) {
    n++; sx += (i / 4) % canvas.width; sy += Math.floor(i / 4 / canvas.width);
  }
}
return [n, n ? sx / n : -1, n ? sy / n : -1];
"""


def pixels(driver, colour, canvas="map") -> tuple[int, float, float]:
    """(count, mean column, mean row) of the canvas's pixels of exactly `colour`."""
    return tuple(driver.execute_script(PIXELS, canvas, *colour))


def cell_centre(world: dict, cell: list[int]) -> tuple[float, float]:
    """The pixel at the centre of a map cell as the page draws it (5 px a cell, North up)."""
    scale = 640 // 128
    row = 127 - cell[1] if world["z_up"] else cell[1]
    return cell[0] * scale + (scale - 1) / 2, row * scale + (scale - 1) / 2


def wait_for(driver, condition, seconds: float = 60):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(lambda d: condition(d))


def text(driver, selector: str) -> str:
    return driver.find_element("css selector", selector).text


def open_page(driver, server, fragment: str) -> None:
    """A fresh load of the page at `#fragment` (a change of the fragment alone would not reload it)."""
    driver.get("about:blank")
    driver.get(f"{server.url}/#{fragment}")


def test_the_page_steps_through_a_recorded_episode_of_each_game(server, played, browser):
    for game in GAMES:
        header, steps = read_recording(played[game]["recording"])
        _, ref_steps = read_recording(played[game]["reference"])
        world, last = header["world"], len(steps) - 1
        open_page(browser, server, "rec=" + urllib.parse.quote(played[game]["recording"]))
        wait_for(browser, lambda d: text(d, "#status") == f"state 0 / {last}")
        assert header["policy"]["name"] in text(browser, "#title") and game in text(browser, "#title")
        for _ in range(3):
            browser.find_element("id", "next").click()
        wait_for(browser, lambda d: text(d, "#status") == f"state 3 / {last}")
        step = steps[3]
        count, col, row = pixels(browser, HERO)
        assert count >= 40, game
        assert (col, row) == pytest.approx(cell_centre(world, step["hero"]), abs=1.0), game
        monsters = pixels(browser, MONSTER)[0]
        assert (monsters > 0) == bool(step["monsters"]), game
        if ref_steps[3]["hero"] != step["hero"]:  # the reference's own cell, beside the hero's
            assert pixels(browser, REFERENCE_HERO)[0] > 0, game
        assert float(text(browser, "tr[data-row=score] td")) == pytest.approx(step["score"], abs=0.051)
        assert text(browser, "tr[data-row=action] td") == header["actions"][step["action"]]
        assert float(text(browser, "tr[data-row=value] td")) == pytest.approx(step["value"], abs=0.00051)
        assert float(text(browser, "tr[data-term=reward] td:nth-child(2)")) == pytest.approx(step["reward"], abs=5.1e-5)
        bars = browser.find_elements("css selector", "#dist .bar")
        assert len(bars) == len(header["actions"])
        chosen = browser.find_element("css selector", "#dist .bar.chosen")
        assert int(chosen.get_attribute("data-action")) == step["action"]
        assert float(chosen.get_attribute("data-prob")) == pytest.approx(step["probs"][step["action"]])
        planes = browser.find_elements("css selector", "#planes canvas")
        assert [p.get_attribute("data-plane") for p in planes] == header["planes"]["names"]
        assert pixels(browser, HERO, "view")[0] > 0  # the view window, centred on the hero
        outcome = header["result"]["outcome"]
        browser.find_element("css selector", f"#event-buttons button[data-event='{outcome}']").click()
        wait_for(browser, lambda d: text(d, "#status") == f"state {last} / {last}")
        assert (pixels(browser, HERO)[1:]) == pytest.approx(cell_centre(world, steps[-1]["hero"]), abs=1.0)
        assert outcome in text(browser, "tr[data-row=events] td")


def test_the_folder_page_lists_the_episodes_by_score_and_opens_one(server, evaluated, browser):
    folder, _ = evaluated
    open_page(browser, server, "folder=" + urllib.parse.quote(str(folder)))
    wait_for(browser, lambda d: len(d.find_elements("css selector", "#episodes tbody tr")) == 6)
    rows = browser.find_elements("css selector", "#episodes tbody tr")
    scores = [float(r.get_attribute("data-score")) for r in rows]
    assert scores == sorted(scores, reverse=True)
    policy = rows[0].find_elements("css selector", "td")[1].text
    rows[0].click()
    wait_for(browser, lambda d: d.find_element("id", "episode-view").is_displayed())
    assert policy in text(browser, "#title")


def test_two_checkpoints_play_the_same_episode_side_by_side(server, runs, browser):
    open_page(browser, server, "")
    usr_conf = browser.find_element("id", "usr-conf")
    wait_for(browser, lambda d: len(d.find_elements("css selector", "#run option")) > 1)
    browser.find_element("id", "ckpt").send_keys(str(checkpoint(runs, "back_to_the_realm", 5)))
    usr_conf.send_keys(json.dumps(GAMES["back_to_the_realm"][0]))
    browser.find_element("id", "ckpt2").send_keys(str(checkpoint(runs, "back_to_the_realm", 6)))
    browser.find_element("id", "play-button").click()
    wait_for(browser, lambda d: " vs " in text(d, "#title"), 120)
    heads = [th.text for th in browser.find_elements("css selector", "tr[data-row=policy] th")]
    assert heads == ["", "model.ckpt-5", "model.ckpt-6", "reference"]
    assert "did not play the same episode" not in text(browser, "#summary")
    assert len(browser.find_elements("css selector", "#dist2 .bar")) == 16  # the second policy's distribution
    browser.find_element("id", "last").click()
    heroes = [td.text for td in browser.find_elements("css selector", "tr[data-row=hero] td")]
    if heroes[0] != heroes[1]:
        assert pixels(browser, OTHER_HERO)[0] > 0


def test_the_page_shows_a_bad_inputs_error(server, browser):
    open_page(browser, server, "")
    wait_for(browser, lambda d: d.find_element("id", "ckpt").is_displayed())
    browser.find_element("id", "ckpt").send_keys("/nonexistent/model.ckpt-9.pkl")
    browser.find_element("id", "play-button").click()
    wait_for(browser, lambda d: d.find_element("id", "error").is_displayed())
    assert "--ckpt: no such file or directory: /nonexistent/model.ckpt-9.pkl" in text(browser, "#error")
