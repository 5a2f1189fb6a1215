"""The platform's `tools` helpers that back_to_the_realm_v2 workflows import
(`tools.train_env_conf_validate`, `tools.metrics_utils`); not the project's own tools/ scripts."""
