"""The 15.0.1 platform's `tools` helpers that gorge_chase workflows import
(`tools.train_env_conf_validate`, `tools.metrics_utils`); not the project's own tools/ scripts."""
