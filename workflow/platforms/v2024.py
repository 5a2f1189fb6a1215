"""The 2024 platform (code packages 8.x-10.x): the game's first season.

Package: `<algo>/algorithm/agent.py`, `<algo>/feature/definition.py`, `<algo>/config.py`,
`<algo>/train_workflow.py` and `conf/configure_app.toml`; kaiwu.json's version below 18.
Env: `reset(usr_conf={"diy": ...})` returns the observation, `step` returns
`(frame_no, obs, score, terminated, truncated, env_info)`; predict / exploit return the
package's list of ActData; the learner hands NumpyData2SampleData numpy rows. A blocked flash
fails (the 2024 rule). The project's own agents speak this protocol.
"""
from __future__ import annotations

from pathlib import Path

from workflow.platforms.base import ConfigError, ExportLayout, Layout, PlatformVersion

REQUIRED_FILES = ("algorithm/agent.py", "feature/definition.py", "config.py", "train_workflow.py")


class Platform2024(PlatformVersion):
    name = "2024"
    title = "2024 (8.x-10.x)"
    env_protocol = "2024"
    hosts_project_agents = True
    flash_rule = "fail"
    export = ExportLayout(
        folder="{algo}",
        modules={"config": "{algo}/config.py", "definition": "{algo}/feature/definition.py",
                 "agent": "{algo}/algorithm/agent.py", "workflow": "{algo}/train_workflow.py"},
        folders={"feature": "{algo}/feature/", "agent": "{algo}/algorithm/", "episodes": "{algo}/"},
        model_file="{algo}/model/model.py",
        dirs=("{algo}", "{algo}/algorithm", "{algo}/model", "{algo}/feature"),
    )

    def claims_manifest(self, major: int, project_code: str) -> bool:
        return major < 18

    def claims_layout(self, root: Path) -> bool:
        return True  # what no later version claims

    def package_layout(self, root: Path, algo: str) -> Layout:
        missing = [f"{algo}/{name}" for name in REQUIRED_FILES if not (root / algo / name).is_file()]
        if missing:
            found = sorted(p.name for p in root.iterdir() if (p / "algorithm" / "agent.py").is_file())
            raise ConfigError(f"app.algo = {algo!r}: {root} lacks {', '.join(missing)} (algorithm folders there: "
                              f"{', '.join(found) or 'none'}; a {self.name} package)")
        return PLATFORM_LAYOUT


PLATFORM = Platform2024()
PLATFORM_LAYOUT = Layout(platform=PLATFORM)
