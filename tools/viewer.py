"""The episode viewer: a local web page that plays an episode of any game with a checkpoint (or a
package's) and the reference, and steps through it, or opens an evaluation's recordings.

    python tools/viewer.py                                   # http://127.0.0.1:8765, the runs in runs/
    python tools/viewer.py --folder out/rec/RUN --port 8800  # an evaluation's --record DIR as a table

A play is what tools/render.py --record --no-gif does: one evaluation.session (the same choice of
checkpoint, package, preset, usr_conf, seed and map, the same error messages), its picture and
recordings written under --cache; the page draws the recordings (evaluation.recording) with plain
JavaScript (viewer/static/). Bad input answers the page with the message, and the log says it too; the
server stays up. It serves the recordings it is asked for by path: keep it on localhost (--host).
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import threading
import time
import traceback
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle

import games
from cli.run import EXIT_BAD_INPUT
from evaluation.inputs import InputError
from evaluation.recording import RecordingError, episode_table, read_header, read_recording, recordings_in
from evaluation.session import AGENTS, EvalRequest, open_session
from games.base import RenderOptions
from realm.back_to_the_realm.render import save_png
from workflow.checkpoints import ckpt_files
from workflow.config import REPO_ROOT

STATIC = REPO_ROOT / "viewer" / "static"
LOG = logging.getLogger("viewer")
#: the fields of a play request beside agent and seed: evaluation.session.EvalRequest's names
FIELDS = ("ckpt", "package", "preset", "usr_conf", "config", "map_seed", "policy")
PATHS = ("ckpt", "package", "config")
PICTURE = RenderOptions(scale=5, view_scale=6, gif=False)  # the map's picture of a play, as tools/render.py draws it


class BadRequest(Exception):
    """A request the viewer cannot serve; the message names the field or file."""


def play_request(fields: dict) -> tuple[EvalRequest, int]:
    """(the EvalRequest, the seed) of a play request; BadRequest naming a bad field. A play of a
    directory plays its newest checkpoint; the reference alone takes no checkpoint or package."""
    unknown = sorted(set(fields) - set(FIELDS) - {"agent", "seed"})
    if unknown:
        raise BadRequest(f"unknown field(s) {', '.join(unknown)}; allowed: agent, seed, {', '.join(FIELDS)}")
    agent = fields.get("agent") or "ckpt"
    if agent not in AGENTS:
        raise BadRequest(f"agent {agent!r}: allowed {' | '.join(AGENTS)}")
    numbers = {}
    for name in ("seed", "map_seed"):
        value = fields.get(name)
        if value not in (None, ""):
            try:
                numbers[name] = int(str(value).strip())
            except ValueError:
                raise BadRequest(f"{name} must be a whole number, got {value!r}") from None
    given = {}
    for name in ("ckpt", "package", "preset", "usr_conf", "config", "policy"):
        value = fields.get(name)
        if value in (None, "") or (agent == "planner" and name in ("ckpt", "package")):
            continue
        text = (value if isinstance(value, str) else json.dumps(value)).strip()
        given[name] = Path(text) if name in PATHS else text
    return EvalRequest(agent=agent, map_seed=numbers.get("map_seed"), newest=True, **given), numbers.get("seed", 0)


class Plays:
    """Episodes played for the page, one at a time, each in its own folder under `cache`."""

    def __init__(self, cache: Path):
        self.cache = cache
        self.lock = threading.Lock()
        self.count = itertools.count(1)

    def play(self, fields: dict) -> dict:
        """Play one episode, draw its map (map.png) and record it, the reference's beside it; the
        recordings' paths. BadRequest for input the session refuses, RuntimeError naming what
        failed otherwise."""
        request, seed = play_request(dict(fields))
        out = self.cache / f"{time.strftime('%Y%m%d-%H%M%S')}-{next(self.count)}"
        LOG.info("play: %s", json.dumps(fields, default=str))
        with self.lock:
            try:
                session = open_session(request, report=lambda line: LOG.info("play: %s", line))
                drawn = session.render(seed, PICTURE)
                png = save_png(drawn.png, out / "map.png")
                outcome = session.game.outcomes[0] if drawn.record.won else session.game.outcomes[1]
                LOG.info("play: score %.1f, steps %d, %s; wrote %s", drawn.record.total_score, drawn.record.steps,
                         outcome, png)
                for path in session.record(out, session.episodes(1, seed)[1]):
                    LOG.info("play: wrote %s", path)
            except InputError as e:
                raise BadRequest(str(e)) from None
        return recordings_of_play(out)


def recordings_of_play(folder: Path) -> dict:
    """{"recording": the played policy's file, "reference": the reference's} of a play's folder."""
    found = {read_header(path)["policy"]["kind"]: path for path in recordings_in(folder)}
    main = found.get("agent") or found.get("reference")
    if main is None:
        raise RuntimeError(f"the play wrote no recording into {folder}")
    return {"recording": str(main), "reference": str(found["reference"]) if "reference" in found else None}


def load_recording(path: str) -> dict:
    """A recording with its reference's (the file its header names, in its folder)."""
    if not path:
        raise BadRequest("give a recording's path (path=...)")
    file = Path(path)
    if file.suffix != ".jsonl" or not file.is_file():
        raise BadRequest(f"no recording at {file} (a .jsonl file that tools/evaluate.py or tools/render.py "
                         "--record wrote)")
    header, steps = read_recording(file)
    body = {"path": str(file), "header": header, "steps": steps, "reference": None}
    reference = header.get("reference")
    if reference and (file.parent / reference).is_file():
        ref_header, ref_steps = read_recording(file.parent / reference)
        body["reference"] = {"path": str(file.parent / reference), "header": ref_header, "steps": ref_steps}
    return body


def load_folder(path: str) -> dict:
    if not path:
        raise BadRequest("give a folder (path=...)")
    folder = Path(path)
    if not folder.is_dir():
        raise BadRequest(f"no folder {folder}")
    rows = episode_table(folder)
    if not rows:
        raise BadRequest(f"{folder} holds no recording (tools/evaluate.py --record {folder} writes them)")
    return {"folder": str(folder.resolve()), "episodes": rows}


def list_runs(runs: Path) -> list[dict]:
    """The runs under `runs` with their checkpoints, newest run first."""
    found = []
    for run in sorted((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True) \
            if runs.is_dir() else ():
        checkpoints = [{"id": c.id, "path": str(c.path)} for d in ckpt_files.checkpoint_dirs(run) if d.name != "user"
                       for c in ckpt_files.list_checkpoints(d)]
        if checkpoints:
            found.append({"run": run.name, "path": str(run), "checkpoints": checkpoints})
    return found


def choices(runs: Path) -> dict:
    return {"games": {name: {"title": game.title, "presets": list(game.presets())} for name, game in games.GAMES.items()},
            "runs": list_runs(runs), "agents": list(AGENTS), "policies": ["greedy", "sample"]}


def make_app(runs: Path, cache: Path, folder: Path | None = None) -> bottle.Bottle:
    """The viewer's routes: the page, its static files, and the JSON API it calls."""
    app = bottle.Bottle()
    plays = Plays(cache)

    def answer(action):
        """Run a handler: its dict as JSON, or {"error": message} with 400 (bad input) or 500."""
        try:
            return action()
        except (BadRequest, RecordingError) as e:
            LOG.warning("bad request %s: %s", bottle.request.path, e)
            bottle.response.status = 400
            return {"error": str(e)}
        except Exception as e:  # a failing package or checkpoint: the page shows it, the server stays up
            LOG.error("failed %s: %s\n%s", bottle.request.path, e, traceback.format_exc())
            bottle.response.status = 500
            return {"error": f"{type(e).__name__}: {e}"}

    @app.get("/")
    def index():
        return bottle.static_file("index.html", root=str(STATIC))

    @app.get("/static/<name:path>")
    def static(name):
        return bottle.static_file(name, root=str(STATIC))

    @app.get("/api/choices")
    def api_choices():
        return answer(lambda: {**choices(runs), "folder": str(folder) if folder else None})

    @app.post("/api/play")
    def api_play():
        def play():
            try:
                fields = json.loads(bottle.request.body.read() or b"{}")
            except ValueError as e:
                raise BadRequest(f"the request body is not JSON: {e}") from None
            if not isinstance(fields, dict):
                raise BadRequest("the request body must be a JSON object of the play's fields")
            return plays.play(fields)
        return answer(play)

    @app.get("/api/recording")
    def api_recording():
        return answer(lambda: load_recording(bottle.request.query.getunicode("path", "")))

    @app.get("/api/folder")
    def api_folder():
        return answer(lambda: load_folder(bottle.request.query.getunicode("path", "")))

    return app


class ThreadingServer(ThreadingMixIn, WSGIServer):
    """One thread per request: the page stays answered while an episode plays."""

    daemon_threads = True


class LoggedRequests(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        LOG.debug("%s %s", self.address_string(), format % args)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: a free one, printed)")
    parser.add_argument("--runs", type=Path, default=REPO_ROOT / "runs", help="folder of runs the page offers (default runs/)")
    parser.add_argument("--cache", type=Path, default=REPO_ROOT / "out" / "viewer",
                        help="where played episodes are recorded (default out/viewer/, one folder per play)")
    parser.add_argument("--folder", type=Path, default=None,
                        help="open this folder of recordings (tools/evaluate.py --record DIR) as the first page")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    import torch  # here, not at the top: --help answers without it

    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    torch.set_num_threads(1)  # batch-1 inference, as the other tools
    if args.folder is not None and not args.folder.is_dir():
        print(f"error: --folder: no folder {args.folder}", file=sys.stderr)
        return EXIT_BAD_INPUT
    app = make_app(args.runs, args.cache, args.folder.resolve() if args.folder else None)
    try:
        server = make_server(args.host, args.port, app, server_class=ThreadingServer, handler_class=LoggedRequests)
    except OSError as e:
        print(f"error: cannot listen on {args.host}:{args.port}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"viewer on http://{args.host}:{server.server_port}/ (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
