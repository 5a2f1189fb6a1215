"""Checkpoints and runs: checkpoint files (ckpt_files), writing and pruning them (manager), the run state and its counters (run_state), run directories and locks (runs)."""
