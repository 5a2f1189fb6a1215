"""What tools/export_kaiwu.py writes into the code, per target: the package's protocol line.
Where each platform version puts things is its ExportLayout (workflow.platforms); what a
registering version's package has beside the code (train_env_conf.toml from the run's
curriculum, the algorithm's registration) is its game's (games.Game.registration_files)."""
from __future__ import annotations

from workflow import platforms

#: The package's protocol constant (episodes.protocol.KAIWU_VERSION) as the project has it; a
#: target's ExportLayout.protocol_line replaces it, so the exported loops speak its protocol.
PROTOCOL_MODULE = "episodes/protocol.py"
PROTOCOL_LINE = f'KAIWU_VERSION = "{platforms.PROJECT.name}"'
