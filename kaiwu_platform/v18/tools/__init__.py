"""The platform's `tools` helpers that 2025 workflows import (`tools.train_env_conf_validate`,
`tools.metrics_utils`); not the project's own tools/ scripts."""
