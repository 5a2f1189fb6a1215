"""The project's algorithm packages, declared once: which folders are package code, and which
four modules make each algorithm a Kaiwu code package.

The training system hosts them by these names (workflow.host.kaiwu_package), reads each one's TOML
sections from its config module's `Settings` (workflow.config), tools/export_kaiwu.py writes one
out in the platform's layout, and tests/test_layering.py holds the folders to the package rule:
they import only each other, the platform's modules (kaiwu_agent, kaiwudrl), numpy and torch.
A new algorithm is its four modules and one entry in ALGORITHMS (and, for another game, in GAMES).
"""
from __future__ import annotations

#: The folders that are package code; everything else of the repository is the simulator, the
#: training system or tools.
PACKAGE_FOLDERS = ("feature", "agent", "episodes")

#: algo -> its modules (dotted names): `config` (the platform's Config and the TOML sections it
#: reads, as `Settings`), `definition` (data classes and protocol functions), `agent` (the Agent
#: class), `workflow` (the training episode loop, the platform's `<algo>/train_workflow.py`).
ALGORITHMS: dict[str, dict[str, str]] = {
    "ppo": {"config": "agent.ppo_config", "definition": "feature.definition", "agent": "agent.ppo_agent",
            "workflow": "episodes.ppo_workflow"},
    "dqn_plus": {"config": "agent.dqn_config", "definition": "feature.dqn_definition", "agent": "agent.dqn_agent",
                 "workflow": "episodes.dqn_workflow"},
    "ppo_v2": {"config": "agent.ppo_v2_config", "definition": "feature.definition_v2", "agent": "agent.ppo_v2_agent",
               "workflow": "episodes.ppo_v2_workflow"},
    "ppo_gorge": {"config": "agent.ppo_gorge_config", "definition": "feature.gorge_chase.definition",
                  "agent": "agent.ppo_gorge_agent", "workflow": "episodes.ppo_gorge_workflow"},
}
DEFAULT_ALGORITHM = "ppo"

#: The game each algorithm plays (kaiwu.json's project_code): the training system hosts it in
#: the newest platform version of that game that hosts the project's agents
#: (workflow.platforms.project); an algorithm not named here plays DEFAULT_GAME.
DEFAULT_GAME = "back_to_the_realm"
GAMES: dict[str, str] = {"ppo_v2": "back_to_the_realm_v2", "ppo_gorge": "gorge_chase"}
