"""The platform versions whose packages keep each algorithm in an `agent_<algo>/` folder and
register it in `conf/algo_conf_<game>.toml` (18.0.2, 24.x and 28.x, 15.0.1): where a package's
modules are, its settings file, the algorithm its app_conf names, and the export layout they
share. A version of this family subclasses `AgentFolderVersion` and sets what is its own.
"""
from __future__ import annotations

from pathlib import Path

from workflow.platforms.base import ConfigError, ExportLayout, Layout, PlatformVersion

REQUIRED_FILES = ("agent.py", "conf/conf.py", "feature/definition.py", "workflow/train_workflow.py",
                  "conf/train_env_conf.toml")

#: The 2025 packages' layout, agent_<algo>/ (18.0.2 and v2 alike), before a version's own keys.
AGENT_FOLDER_EXPORT = ExportLayout(
    folder="agent_{algo}",
    modules={"config": "agent_{algo}/conf/conf.py", "definition": "agent_{algo}/feature/definition.py",
             "agent": "agent_{algo}/agent.py", "workflow": "agent_{algo}/workflow/train_workflow.py"},
    folders={"feature": "agent_{algo}/feature/", "agent": "agent_{algo}/algorithm/",
             "episodes": "agent_{algo}/workflow/"},
    model_file="agent_{algo}/model/model.py",
    dirs=("agent_{algo}", "agent_{algo}/algorithm", "agent_{algo}/model", "agent_{algo}/feature",
          "agent_{algo}/conf", "agent_{algo}/workflow"),
    registers_algorithm=True,
)


def registered_layout(root: Path, algo: str, platform: PlatformVersion, algo_conf: Path,
                      agent_key: str = "aisrv_model", workflow_key: str = "train_workflow") -> Layout:
    """The layout of `algo` as `algo_conf` (conf/algo_conf_<game>.toml) registers it:
    `agent_key` names the agent class, `workflow_key` the train workflow (dotted names)."""
    import toml

    where = root / algo_conf
    try:
        table = toml.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, toml.TomlDecodeError) as e:
        raise ConfigError(f"{where}: cannot read it ({type(e).__name__}: {e})") from None
    entry = table.get(algo)
    if not isinstance(entry, dict):
        registered = sorted(name for name, value in table.items() if isinstance(value, dict))
        raise ConfigError(f"app.algo = {algo!r}: {where} registers {', '.join(registered) or 'no algorithm'}")
    names = {}
    for key in (agent_key, workflow_key):
        value = entry.get(key)
        if not isinstance(value, str) or value.count(".") < 1:
            raise ConfigError(f"{where} [{algo}] {key}: expected a dotted name like \"agent_{algo}.agent.Agent\", "
                              f"got {value!r}")
        names[key] = value.rsplit(".", 1)
    folder = names[agent_key][0].split(".")[0]
    return Layout(config=f"{folder}.conf.conf", definition=f"{folder}.feature.definition",
                  agent=names[agent_key][0], workflow=names[workflow_key][0], platform=platform,
                  agent_class=names[agent_key][1], workflow_function=names[workflow_key][1])


class AgentFolderVersion(PlatformVersion):
    """A version of the agent_<algo>/ family."""

    #: the algorithm registry (conf/algo_conf_<game>.toml) and the keys naming the agent and the workflow
    algo_conf: Path
    agent_key: str = "aisrv_model"
    workflow_key: str = "train_workflow"
    #: conf/app_conf_<game>.toml, whose `[<game>.policies.train_one] algo` names the algorithm (None: none)
    app_conf: Path | None = None

    def claims_layout(self, root: Path) -> bool:
        return (Path(root) / self.algo_conf).is_file() and any(p.is_dir() for p in Path(root).glob("agent_*"))

    def package_layout(self, root: Path, algo: str) -> Layout:
        layout = registered_layout(Path(root), algo, self, self.algo_conf, self.agent_key, self.workflow_key)
        folder = layout.agent.split(".")[0]
        missing = [f"{folder}/{name}" for name in REQUIRED_FILES if not (Path(root) / folder / name).is_file()]
        if missing:
            found = sorted(p.name for p in Path(root).glob("agent_*") if p.is_dir())
            raise ConfigError(f"app.algo = {algo!r}: {root} lacks {', '.join(missing)} (agent_<algo> folders there: "
                              f"{', '.join(found) or 'none'}; a {self.name} package)")
        return layout

    def app_defaults(self, root: Path) -> dict:
        """`app` is the game; the algorithm is app_conf's `[<game>.policies.train_one] algo` (where
        the version's configure_app.toml names neither)."""
        if self.app_conf is None:
            return {}
        import toml

        defaults = {"app": self.game}
        try:
            table = toml.loads((Path(root) / self.app_conf).read_text(encoding="utf-8"))
            algo = table[self.game]["policies"]["train_one"]["algo"]
        except (OSError, UnicodeDecodeError, toml.TomlDecodeError, KeyError, TypeError):
            return defaults
        if isinstance(algo, str) and algo:
            defaults["algo"] = algo
        return defaults

    def env_conf_file(self, root: Path, layout: Layout) -> Path | None:
        return Path(root) / layout.agent.split(".")[0] / "conf" / "train_env_conf.toml"
