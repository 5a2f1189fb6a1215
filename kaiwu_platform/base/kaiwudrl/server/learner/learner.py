"""Refused: the platform's process tooling (see kaiwudrl._refused)."""
from kaiwudrl._refused import refuse

refuse(__name__)
