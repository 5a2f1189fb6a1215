"""Package code, the features: the model's input (layout, observation), reward shaping, curriculum, each algorithm's samples."""
