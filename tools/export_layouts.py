"""What tools/export_kaiwu.py writes beside the code, per target: the package's protocol line
and a registering version's settings files (train_env_conf.toml from the run's curriculum, the
algorithm's registration). Where each platform version puts things is its ExportLayout
(workflow.platforms: v2024, v18)."""
from __future__ import annotations

from workflow import platforms

#: The package's protocol constant (episodes.protocol.KAIWU_VERSION) as the project has it; a
#: target's ExportLayout.protocol_line replaces it, so the exported loops speak its protocol.
PROTOCOL_MODULE = "episodes/protocol.py"
PROTOCOL_LINE = f'KAIWU_VERSION = "{platforms.PROJECT.name}"'


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


def algo_conf(algo: str, eval_workflows: str = "kaiwu_agent.back_to_the_realm.{algo}") -> dict:
    """conf/algo_conf_<game>.toml: the algorithm registered as the platform names it;
    `eval_workflows` is the module holding the platform's own eval and exam workflows. On 18.0.2
    they exist for dqn, target_dqn and diy only (each imports its
    `agent_<algo>.feature.preprocessor`): upload as `--algo diy` for the platform to score it."""
    folder = f"agent_{algo}"
    workflows = eval_workflows.format(algo=algo)
    return {algo: {
        "actor_model": f"{folder}.agent.Agent",
        "learner_model": f"{folder}.agent.Agent",
        "aisrv_model": f"{folder}.agent.Agent",
        "trainer": "kaiwudrl.server.learner.standard_trainer.StandardTrainer",
        "predictor": "kaiwudrl.server.actor.standard_predictor.StandardPredictor",
        "train_workflow": f"{folder}.workflow.train_workflow.workflow",
        "eval_workflow": f"{workflows}.eval_workflow.workflow",
        "exam_workflow": f"{workflows}.exam_workflow.workflow",
    }}


def app_conf(algo: str) -> dict:
    """conf/app_conf_back_to_the_realm.toml: the platform's policy entry naming the algorithm."""
    return {"back_to_the_realm": {
        "run_handler": "environment.back_to_the_realm_run_handler.NatureRunHandler",
        "rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
        "policies": {"train_one": {"policy_builder": "kaiwudrl.server.aisrv.async_policy.AsyncBuilder", "algo": algo,
                                   "state": "conf.back_to_the_realm_state.BackToTheRealmState",
                                   "action": "conf.back_to_the_realm_action.BackToTheRealmAction"}}}}


# --- back_to_the_realm_v2 (24.x, 28.x) ------------------------------------------------------------

V2_GAME = "back_to_the_realm_v2"


def v2_train_env_conf(curriculum) -> dict:
    """train_env_conf.toml of a v2 package: the run's [curriculum_v2] as the parsed toml tree
    (`{"env_conf": {"map_name", "<map_name>": {...}}}`), checked by the simulator's rules."""
    from realm.v2.usr_conf import validate_usr_conf

    usr_conf = curriculum.usr_conf()
    validate_usr_conf(usr_conf)
    return usr_conf


def v2_algo_conf(algo: str) -> dict:
    """conf/algo_conf_back_to_the_realm_v2.toml: registered as the official packages register
    theirs (the platform's eval and exam workflows are its own tools.eval)."""
    return algo_conf(algo, "tools.eval.workflow")


def v2_app_conf(algo: str) -> dict:
    """conf/app_conf_back_to_the_realm_v2.toml: the policy entry naming the algorithm."""
    return {V2_GAME: {
        "run_handler": "environment.back_to_the_realm_run_handler.NatureRunHandler",
        "rl_helper": "kaiwudrl.server.aisrv.kaiwu_rl_helper_standard.KaiWuRLStandardHelper",
        "policies": {"train_one": {"policy_builder": "kaiwudrl.server.aisrv.async_policy.AsyncBuilder", "algo": algo}}}}
