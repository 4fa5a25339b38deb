"""p2ptrace's recorders for Python programs (see torchrec)."""
