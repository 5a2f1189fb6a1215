"""Package code, the episode loops: the one episode runner and each algorithm's train_workflow."""
