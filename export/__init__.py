"""One of the project's agents and a checkpoint of it as a Kaiwu platform code package of its
game's platform version: which project files the package carries and how their imports are
moved under its algorithm's folder (code), and the package written (package). tools/export_kaiwu.py
is its command line."""
