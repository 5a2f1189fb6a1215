"""`common_python.utils.common_func` of the 13.0.1 platform: the 2026 engine's
(kaiwudrl.common.utils.engine_common_func)."""
from kaiwudrl.common.utils.engine_common_func import Frame, attached, create_cls

__all__ = ["Frame", "attached", "create_cls"]
