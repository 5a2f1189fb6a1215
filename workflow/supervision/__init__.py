"""Process supervision: one run's child processes (processes, supervisor) and the same on Ray (ray_roles, ray_supervisor, ray_cluster)."""
