"""`MonitorConfigBuilder`: the fluent builder a 15.0.1 package's `conf/monitor_builder.py` uses
to describe its dashboard panels. The platform draws them; here the built dict is only checked
and returned (the run's metrics go to metrics.csv and TensorBoard whatever the panels say), so
a package whose builder calls are out of order fails here as it would on the platform."""
from __future__ import annotations

PANEL_TYPES = ("line", "bar", "pie", "table", "number")


class MonitorConfigBuilder:
    """title(...).add_group(...).add_panel(...).add_metric(...).end_panel().end_group().build()"""

    def __init__(self):
        self._config = {"title": "", "groups": []}
        self._group = None
        self._panel = None

    def title(self, title: str) -> "MonitorConfigBuilder":
        self._config["title"] = str(title)
        return self

    def add_group(self, group_name: str, group_name_en: str = "") -> "MonitorConfigBuilder":
        if self._group is not None:
            raise ValueError(f"add_group({group_name!r}): group {self._group['group_name']!r} is still open "
                             "(call end_group() first)")
        self._group = {"group_name": group_name, "group_name_en": group_name_en, "panels": []}
        return self

    def add_panel(self, name: str, name_en: str = "", type: str = "line") -> "MonitorConfigBuilder":  # noqa: A002
        if self._group is None:
            raise ValueError(f"add_panel({name!r}) outside a group: call add_group(...) first")
        if self._panel is not None:
            raise ValueError(f"add_panel({name!r}): panel {self._panel['name']!r} is still open (call end_panel())")
        if type not in PANEL_TYPES:
            raise ValueError(f"add_panel({name!r}, type={type!r}): allowed {' | '.join(PANEL_TYPES)}")
        self._panel = {"name": name, "name_en": name_en, "type": type, "metrics": []}
        return self

    def add_metric(self, metrics_name: str, expr: str = "") -> "MonitorConfigBuilder":
        if self._panel is None:
            raise ValueError(f"add_metric({metrics_name!r}) outside a panel: call add_panel(...) first")
        self._panel["metrics"].append({"metrics_name": metrics_name, "expr": expr})
        return self

    def end_panel(self) -> "MonitorConfigBuilder":
        if self._panel is None:
            raise ValueError("end_panel() without an open panel")
        self._group["panels"].append(self._panel)
        self._panel = None
        return self

    def end_group(self) -> "MonitorConfigBuilder":
        if self._group is None or self._panel is not None:
            raise ValueError("end_group() needs an open group and its panels ended")
        self._config["groups"].append(self._group)
        self._group = None
        return self

    def build(self) -> dict:
        if self._group is not None:
            raise ValueError(f"build(): group {self._group['group_name']!r} is still open (call end_group())")
        return self._config
