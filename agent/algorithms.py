"""Which folders of this repository are package code. Each game declares its own agents' four
modules (games.<game>'s `project_agents`: one algorithm name, say "ppo", in every game, the game
bringing its features, reward and episodes); the training system hosts them by (app.app, app.algo)
(workflow.platforms.project), tools/export_kaiwu.py writes one out in the platform's layout, and
tests/test_layering.py holds these folders to the package rule: they import only each other, the
platform's modules (kaiwu_agent, kaiwudrl), numpy and torch.
"""
from __future__ import annotations

#: The folders that are package code; everything else of the repository is the simulator, the
#: training system or tools.
PACKAGE_FOLDERS = ("feature", "agent", "episodes")

#: The algorithm a config that names none trains (configure_app.toml's app.algo).
DEFAULT_ALGORITHM = "ppo"
