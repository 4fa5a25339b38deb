# p2ptrace puts this directory first on the ranks' PYTHONPATH: with
# P2PTRACE_SEGDIR set, torch.distributed is wrapped before the program runs.
import os
import sys

if os.environ.get("P2PTRACE_SEGDIR") and os.environ.get("P2PTRACE_PYTHON") == "torch":
    try:
        from p2ptrace_rec import torchrec
        torchrec.install()
    except ImportError as e:
        sys.stderr.write("p2ptrace: cannot record torch.distributed: %s\n" % e)
