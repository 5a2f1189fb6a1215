"""The small learning tasks: the smallest real learning problem of each game (near_end: the 2024
game's, near_end_v2: back_to_the_realm_v2's, gorge_survival: gorge_chase's), each a config, a
training in one process (workflow.host.local_trainer) within a budget of env steps, and an
account of what was learned; the learning tests and the benchmarks train them (tools/)."""
