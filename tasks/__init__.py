"""The small learning tasks: the smallest real learning problem of each game, one module of the
game's name (back_to_the_realm: reach a near end; back_to_the_realm_v2: the same with the end out
of view; gorge_chase: outrun one monster), each a config, a training in one process
(workflow.host.local_trainer) within a budget of env steps, and an account of what was learned;
the learning tests and the benchmarks train them (tools/<game>/)."""
