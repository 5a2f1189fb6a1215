"""The Kaiwu platform's `kaiwu_agent` modules, as this toolkit provides them to a code package.

A package written for the platform imports these names unchanged (`create_cls`, `attached`,
`Frame`, `BaseAgent` and its five wrappers, the protocol registry, `feature_process`); the
training system in `workflow/` plays the platform's part behind them. What the platform does
that cannot be confirmed from its public sources raises a clear error instead of guessing.
"""
