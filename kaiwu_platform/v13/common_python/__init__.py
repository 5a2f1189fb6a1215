"""The 13.0.1 platform's `common_python` helpers that robot_vacuum packages import."""
