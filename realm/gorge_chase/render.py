"""Pictures of a gorge_chase episode: the map, the hero's trail, both monsters and their paths,
flashes (a line from take-off to landing), chests and buffs (a hollow marker while a buff is
refreshing) and the hero's 21x21 view box. `render_png` draws the episode's last state;
`render_gif` one frame per `every` steps.

    frames = record_episode(env, policy, usr_conf, seed=0)   # plays and keeps each step's state
    render_png(frames, "episode.png"); render_gif(frames, "episode.gif")
"""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from realm.gorge_chase.constants import VIEW_RADIUS  # noqa: E402


def record_episode(env, policy, usr_conf=None, seed=None) -> list[dict]:
    """Play one episode with `policy.act(env)`; returns one state dict per step (step 0 first)."""
    obs = env.reset(usr_conf, seed=seed)
    frames = [_state(env, obs)]
    while not (obs["terminated"] or obs["truncated"]):
        _, obs = env.step(policy.act(env))
        frames.append(_state(env, obs))
    return frames


def _state(env, obs) -> dict:
    return {"walkable": env.map.walkable, "step": env.step_no, "hero": (env.hero_x, env.hero_z),
            "hero_path": list(env.hero_path), "monsters": [list(m.path) for m in env.monsters],
            "treasures": [(t[1], t[2]) for t in env.treasures if t[3]],
            "buffs": [(b[1], b[2], b[3]) for b in env.buffs], "flashes": list(env.flashes),
            "score": obs["observation"]["env_info"]["total_score"], "caught": env.caught, "map": env.map.name}


def _draw(ax, f: dict) -> None:
    ax.imshow(np.where(f["walkable"], 0.95, 0.25), cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    hx, hz = f["hero"]
    ax.add_patch(plt.Rectangle((hx - VIEW_RADIUS - 0.5, hz - VIEW_RADIUS - 0.5), 2 * VIEW_RADIUS + 1,
                               2 * VIEW_RADIUS + 1, fill=False, edgecolor="tab:blue", lw=1, ls="--"))
    path = np.array(f["hero_path"])
    ax.plot(path[:, 0], path[:, 1], color="tab:blue", lw=0.8, alpha=0.7)
    for colour, mpath in zip(("tab:red", "tab:purple"), f["monsters"]):
        p = np.array(mpath)
        ax.plot(p[:, 0], p[:, 1], color=colour, lw=0.8, alpha=0.6)
        ax.plot(*p[-1], "s", color=colour, ms=6)
    for _, (x0, z0), (x1, z1) in f["flashes"]:
        ax.annotate("", (x1, z1), (x0, z0), arrowprops={"arrowstyle": "->", "color": "orange", "lw": 1.5})
    if f["treasures"]:
        t = np.array(f["treasures"])
        ax.plot(t[:, 0], t[:, 1], "*", color="gold", mec="k", mew=0.5, ms=10)
    for x, z, up in f["buffs"]:
        ax.plot(x, z, "D", color="tab:green" if up else "none", mec="tab:green", ms=7)
    ax.plot(hx, hz, "o", color="tab:blue", mec="k", ms=7)
    end = " CAUGHT" if f["caught"] else ""
    ax.set_title(f"{f['map']}  step {f['step']}  score {f['score']}{end}", fontsize=9)
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
