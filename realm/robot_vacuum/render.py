"""Pictures of a robot_vacuum episode: the map (obstacles dark, dirt lavender, cleaned floor
white), the chargers (green 3x3), each official robot with its 21x21 square and its path, the
hero's trail and its 21x21 view box, with the score, battery and charges in the title.
`render_png` draws one recorded state (the last by default); `render_gif` one frame per `every`
steps.

    frames = record_episode(env, policy, usr_conf, seed=0)   # plays and keeps each step's state
    render_png(frames, "episode.png"); render_gif(frames, "episode.gif")
"""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from realm.robot_vacuum.constants import CELL_BLOCKED, CELL_DIRT, CHARGER_SIZE, NPC_RADIUS, VIEW_RADIUS  # noqa: E402
from realm.robot_vacuum.maps import CELL_X, CELL_Z  # noqa: E402

NPC_COLOURS = ("tab:red", "tab:orange", "tab:purple", "tab:brown")


def record_episode(env, policy, usr_conf=None, seed=None) -> list[dict]:
    """Play one episode with `policy.act(env)`; returns one state dict per step (step 0 first)."""
    obs = env.reset(usr_conf, seed=seed)
    frames = [state_of(env, obs)]
    while not (obs["terminated"] or obs["truncated"]):
        _, obs = env.step(policy.act(env))
        frames.append(state_of(env, obs))
    return frames


def state_of(env, obs) -> dict:
    """What a picture of the env's current step needs (copies: the env moves on)."""
    info = obs["observation"]["env_info"]
    return {"cells": env.dirt_grid(), "step": env.step_no, "hero": (CELL_X[env.hero_cell], CELL_Z[env.hero_cell]),
            "hero_path": [(CELL_X[c], CELL_Z[c]) for c in env.hero_path],
            "npcs": [[(CELL_X[c], CELL_Z[c]) for c in path] for path in env.npc_paths],
            "npc_homes": list(env.npc_homes), "chargers": [env.map.chargers[i] for i in env.charger_sites],
            "score": info["total_score"], "battery": info["remaining_charge"], "charges": info["charge_count"],
            "end": env.fail_reason if obs["terminated"] else ("time" if obs["truncated"] else ""),
            "map": env.map.name}


def _draw(ax, f: dict) -> None:
    cells = f["cells"]
    rgb = np.ones(cells.shape + (3,))
    rgb[cells == CELL_BLOCKED] = (0.25, 0.25, 0.25)
    rgb[cells == CELL_DIRT] = (0.80, 0.75, 0.95)
    ax.imshow(rgb, interpolation="nearest")
    for x, z in f["chargers"]:
        ax.add_patch(plt.Rectangle((x - 0.5, z - 0.5), CHARGER_SIZE, CHARGER_SIZE, color="tab:green", alpha=0.8))
    for colour, (ox, oz), path in zip(NPC_COLOURS * 2, f["npc_homes"], f["npcs"]):
        ax.add_patch(plt.Rectangle((ox - NPC_RADIUS - 0.5, oz - NPC_RADIUS - 0.5), 2 * NPC_RADIUS + 1,
                                   2 * NPC_RADIUS + 1, fill=False, edgecolor=colour, lw=0.6, ls=":"))
        p = np.array(path)
        ax.plot(p[:, 0], p[:, 1], color=colour, lw=0.5, alpha=0.5)
        ax.plot(*p[-1], "s", color=colour, mec="k", mew=0.5, ms=6)
    hx, hz = f["hero"]
    ax.add_patch(plt.Rectangle((hx - VIEW_RADIUS - 0.5, hz - VIEW_RADIUS - 0.5), 2 * VIEW_RADIUS + 1,
                               2 * VIEW_RADIUS + 1, fill=False, edgecolor="tab:blue", lw=1, ls="--"))
    path = np.array(f["hero_path"])
    ax.plot(path[:, 0], path[:, 1], color="tab:blue", lw=0.6, alpha=0.6)
    ax.plot(hx, hz, "o", color="tab:blue", mec="k", ms=7)
    end = f"  END: {f['end']}" if f["end"] else ""
    ax.set_title(f"{f['map']}  step {f['step']}  cleaned {f['score']}  battery {f['battery']}  "
                 f"charges {f['charges']}{end}", fontsize=8)
    ax.set_xticks([])
    ax.set_yticks([])


def render_png(frames: list[dict], path, index: int = -1) -> None:
    fig, ax = plt.subplots(figsize=(6, 6), dpi=110)
    _draw(ax, frames[index])
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def render_gif(frames: list[dict], path, every: int = 10, fps: int = 8) -> None:
    import imageio.v2 as imageio

    images = []
    for f in frames[::every] + [frames[-1]]:
        fig, ax = plt.subplots(figsize=(4, 4), dpi=80)
        _draw(ax, f)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        images.append(imageio.imread(buf.getvalue()))
    imageio.mimsave(path, images, duration=1 / fps)
