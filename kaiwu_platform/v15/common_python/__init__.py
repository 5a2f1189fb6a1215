"""The 15.0.1 platform's `common_python` helpers that gorge_chase packages import."""
