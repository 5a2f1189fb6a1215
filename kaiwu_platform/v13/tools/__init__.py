"""The 13.0.1 platform's `tools` helpers that robot_vacuum workflows import
(`tools.train_env_conf_validate`, `tools.metrics_utils`); not the project's own tools/ scripts."""
