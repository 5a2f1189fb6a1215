"""`CONFIG`: the framework configuration a package reads (`CONFIG.algo`, `CONFIG.app`, ...).

The training system fills it once per process from the run's config (every `[app]` key of the
package's configure_app.toml, platform-only keys included, plus `svr_name`, `restore_dir` and
`user_ckpt_dir` for this run). As on the platform, a key nobody set reads as "".
"""
from __future__ import annotations

MISSING = ""  # what the platform returns for a key it does not know


class ConfigControl:
    def __init__(self):
        object.__setattr__(self, "_values", {})

    def load(self, values: dict) -> None:
        """Replace the configuration (the training system calls this when a process starts)."""
        self._values.clear()
        self._values.update(values)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._values.get(name, MISSING)

    def __setattr__(self, name: str, value) -> None:
        self._values[name] = value

    def to_dict(self) -> dict:
        return dict(self._values)


CONFIG = ConfigControl()
