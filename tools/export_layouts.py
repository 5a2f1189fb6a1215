"""Where tools/export_kaiwu.py puts things, per platform version, and the files only an 18.0.2
(2025) package has.

2024 (8.x-10.x): `<algo>/config.py`, `<algo>/feature/`, `<algo>/algorithm/agent.py`,
`<algo>/model/model.py`, `<algo>/train_workflow.py` (episodes beside it), `conf/configure_app.toml`.
18 (18.0.2): `agent_<algo>/{agent.py, algorithm/, conf/conf.py, conf/train_env_conf.toml,
feature/, model/model.py, workflow/train_workflow.py}` (episodes in workflow/), the algorithm
registered in `conf/algo_conf_back_to_the_realm.toml`; its `feature/preprocessor.py` is the
`Preprocessor` the platform's own eval and exam workflows import by that path.
"""
from __future__ import annotations

from dataclasses import dataclass

KAIWU_VERSIONS = ("2024", "18")
#: kaiwu.json's version of an 18 export (a 2024 export writes the toolkit's version, as before)
VERSION_18 = "18.0.2"


@dataclass(frozen=True)
class Target:
    """One platform version's layout; paths hold `{algo}` until the algorithm's name is known."""

    kaiwu_version: str
    folder: str  # the algorithm's folder
    modules: dict  # part (config, definition, agent, workflow) -> file
    folders: dict  # package folder -> where its other files go
    model_file: str  # agent/model.py's place (the platform's model/model.py)
    dirs: tuple  # folders that get an __init__.py

    def place(self, path: str, algo: str) -> str:
        return path.format(algo=algo)


TARGET_2024 = Target(
    kaiwu_version="2024", folder="{algo}",
    modules={"config": "{algo}/config.py", "definition": "{algo}/feature/definition.py",
             "agent": "{algo}/algorithm/agent.py", "workflow": "{algo}/train_workflow.py"},
    folders={"feature": "{algo}/feature/", "agent": "{algo}/algorithm/", "episodes": "{algo}/"},
    model_file="{algo}/model/model.py",
    dirs=("{algo}", "{algo}/algorithm", "{algo}/model", "{algo}/feature"),
)
TARGET_18 = Target(
    kaiwu_version="18", folder="agent_{algo}",
    modules={"config": "agent_{algo}/conf/conf.py", "definition": "agent_{algo}/feature/definition.py",
             "agent": "agent_{algo}/agent.py", "workflow": "agent_{algo}/workflow/train_workflow.py"},
    folders={"feature": "agent_{algo}/feature/", "agent": "agent_{algo}/algorithm/", "episodes": "agent_{algo}/workflow/"},
    model_file="agent_{algo}/model/model.py",
    dirs=("agent_{algo}", "agent_{algo}/algorithm", "agent_{algo}/model", "agent_{algo}/feature", "agent_{algo}/conf",
          "agent_{algo}/workflow"),
)
TARGETS = {"2024": TARGET_2024, "18": TARGET_18}

#: The package's protocol constant (episodes.protocol.KAIWU_VERSION) as the project has it, and as
#: an 18 export writes it: the exported loops then hand their envs env_conf usr_confs.
PROTOCOL_MODULE = "episodes/protocol.py"
PROTOCOL_LINE = 'KAIWU_VERSION = "2024"'
PROTOCOL_LINE_18 = 'KAIWU_VERSION = "18"'
#: What the platform's 2025 workflows import from `agent_<algo>/feature/preprocessor.py`.
PREPROCESSOR_SHIM = ('"""The per-episode Preprocessor the platform\'s 2025 workflows import from here, handing it to\n'
                     '`agent.observation_process(obs, preprocessor, state)` (feature.observation18)."""\n'
                     "from feature.observation18 import Preprocessor  # noqa: F401\n")


def train_env_conf(curriculum) -> dict:
    """`[env_conf]` of train_env_conf.toml: the episodes of the curriculum's last stage (the task it
    trains toward) as the platform's settings. Chests drawn by the platform when the curriculum
    may place them anywhere, else one draw of the curriculum's own (its chest_ids are narrower)."""
    from feature.curriculum import SLOT_IDS, CurriculumSampler, env_conf

    last = curriculum.stages[-1] if curriculum.chest_mode == "staged" and curriculum.stages else curriculum
    drawn = env_conf(CurriculumSampler(curriculum, seed=0).sample(episode=2**62, env_step=2**62))["env_conf"]
    if sorted(curriculum.chest_ids) == SLOT_IDS and last.chest_mode == "fixed":
        drawn.update(treasure_random=True, treasure_count=last.chest_num, treasure_id=[])
    return drawn


def algo_conf(algo: str) -> dict:
    """conf/algo_conf_back_to_the_realm.toml: the algorithm registered as the platform names it.
    The platform ships eval/exam workflows for dqn, target_dqn and diy only (each imports its
    `agent_<algo>.feature.preprocessor`): upload as `--algo diy` for the platform to score it."""
    folder = f"agent_{algo}"
    return {algo: {
        "actor_model": f"{folder}.agent.Agent",
        "learner_model": f"{folder}.agent.Agent",
        "aisrv_model": f"{folder}.agent.Agent",
        "trainer": "kaiwudrl.server.learner.standard_trainer.StandardTrainer",
        "predictor": "kaiwudrl.server.actor.standard_predictor.StandardPredictor",
        "train_workflow": f"{folder}.workflow.train_workflow.workflow",
        "eval_workflow": f"kaiwu_agent.back_to_the_realm.{algo}.eval_workflow.workflow",
        "exam_workflow": f"kaiwu_agent.back_to_the_realm.{algo}.exam_workflow.workflow",
    }}


def app_conf(algo: str) -> dict:
    """conf/app_conf_back_to_the_realm.toml: the platform's policy entry naming the algorithm."""
    return {"back_to_the_realm": {
        "run_handler": "environment.back_to_the_realm_run_handler.NatureRunHandler",
        "rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
        "policies": {"train_one": {"policy_builder": "kaiwudrl.server.aisrv.async_policy.AsyncBuilder", "algo": algo,
                                   "state": "conf.back_to_the_realm_state.BackToTheRealmState",
                                   "action": "conf.back_to_the_realm_action.BackToTheRealmAction"}}}}


#: [app] keys an 18 export adds to configure_app.toml (the official 18.0.2 file's, all of them
#: platform bookkeeping that the toolkit's host accepts and ignores)
APP_KEYS_18 = {
    "algo_conf": "conf/algo_conf_back_to_the_realm.toml",
    "selfplay_app_conf": "conf/app_conf_back_to_the_realm.toml",
    "noselfplay_app_conf": "conf/app_conf_back_to_the_realm.toml",
    "self_play": False,
    "set_name": "back_to_the_realm_set1000",
    "self_play_set_name": "back_to_the_realm_set1000",
    "framework_integration_patterns": "standard",
    "aisrv_framework": "kaiwu_env",
}
