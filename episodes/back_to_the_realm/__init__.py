"""Back to the Realm's training episodes (episodes.py) and its algorithms' train workflows."""
