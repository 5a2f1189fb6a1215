"""Never imported by the launcher: imported once, inside the launcher's fork server
(multiprocessing's "forkserver" start method), before it forks any child.

The fork server is a clean process that has imported the roles' modules (torch, reverb, the
training system): each child forked from it starts in a fraction of a second instead of
importing them again (several seconds of CPU per learner, aisrv and evaluator, and per restart).
Nothing runs in it: no torch thread pool, no reverb client, no env.

It ignores Ctrl-C and SIGTERM, as the children do: a stop sent to the launcher's whole process
group is the launcher's to carry out, and a fork server that died of it would make the launcher
read every child as gone (multiprocessing reports exit code 255 for them). It ends by itself
when the launcher ends.
"""
import importlib
import os
import signal

from workflow.supervision.processes import ROLE_MODULES

signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # its stderr is the launcher's terminal, not a child's log

#: Imported here too: torch imports torch._dynamo (about a second of CPU) the first time an
#: optimizer adds a parameter group or steps (torch.optim wraps both for torch.compile): every
#: learner steps one, and an official package's Agent builds its Adam in every role.
LAZY_IMPORTS = ("torch._dynamo",)

for module in (*ROLE_MODULES.values(), *LAZY_IMPORTS):
    try:
        importlib.import_module(module)
    except BaseException:  # a module that fails to import fails again in the child, which logs and reports it
        pass
