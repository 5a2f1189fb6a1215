"""`Stopped`, the one way a stop request leaves a package's workflow: its own module, so that
local mode (no replay server) raises and catches it without importing reverb."""


class Stopped(BaseException):
    """The process was asked to stop: raised out of a blocked send, or out of an env the
    package's workflow steps. A BaseException, like KeyboardInterrupt, so a package's own
    `except Exception` does not swallow it."""
