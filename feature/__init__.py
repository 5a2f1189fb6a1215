"""What a competitor edits: model inputs (layout, definition), reward shaping, curriculum."""
