"""`common_python.utils.workflow_disaster_recovery` of the 15.0.1 platform: the 2026 engine's
(kaiwudrl.common.utils.engine_disaster_recovery)."""
from kaiwudrl.common.utils.engine_disaster_recovery import handle_disaster_recovery

__all__ = ["handle_disaster_recovery"]
