"""The project's algorithm packages, declared once: which folders are package code, and which
four modules make each algorithm a Kaiwu code package.

The training system hosts them by these names (workflow.host.kaiwu_package), reads each one's TOML
sections from its config module's `Settings` (workflow.config), tools/export_kaiwu.py writes one
out in the platform's layout, and tests/test_layering.py holds the folders to the package rule:
they import only each other, the platform's modules (kaiwu_agent, kaiwudrl), numpy and torch.
A new algorithm is its four modules and one entry in ALGORITHMS.
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
}
DEFAULT_ALGORITHM = "ppo"
