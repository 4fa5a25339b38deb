"""Per-call cost of the torch.distributed recorder, on real gloo.

Run as 2 ranks (from the repository root):

  for r in 0 1; do RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29571 \\
    /usr/bin/python3 recorder/python/bench/overhead.py & done; wait

Each rank times N rounds of isend + irecv + two Work.wait (4 calls) to its
peer, first without the recorder, then with it (writing a segment to a
temporary directory), and rank 0 prints the difference per call.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from p2ptrace_rec import torchrec  # noqa: E402

N = int(os.environ.get("N", "2000"))


def rounds(n):
    peer = 1 - dist.get_rank()
    out, got = torch.ones(16), torch.zeros(16)
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(n):
        s = dist.isend(out, peer)
        r = dist.irecv(got, peer)
        s.wait()
        r.wait()
    return time.perf_counter() - t0


class FakeWork:
    def wait(self):
        return True


def bookkeeping(rec, n):
    """The recorder alone: its wrappers around calls that do nothing."""
    isend = rec.wrap_nonblocking_p2p(lambda *a, **k: FakeWork(), True)
    irecv = rec.wrap_nonblocking_p2p(lambda *a, **k: FakeWork(), False)
    wait = rec.wrap_wait(FakeWork.wait)
    peer = 1 - dist.get_rank()
    out, got = torch.ones(16), torch.zeros(16)
    t0 = time.process_time()  # CPU time: what the recorder costs, whatever the load
    for _ in range(n):
        s = isend(out, peer)
        r = irecv(got, peer)
        wait(s)
        wait(r)
    return time.process_time() - t0


dist.init_process_group("gloo")
rounds(200)  # warm up
best_plain = min(rounds(N) for _ in range(3))
os.environ["P2PTRACE_SEGDIR"] = tempfile.mkdtemp()
rec = torchrec.install()
rounds(200)
best_rec = min(rounds(N) for _ in range(3))
alone = min(bookkeeping(rec, N) for _ in range(3))
if dist.get_rank() == 0:
    calls = 4 * N
    print("gloo isend/irecv/wait of 16 floats, hash full: %.1f us/call plain, %.1f us/call recorded (wall, both ranks"
          " recording); the recorder's own work: %.1f us CPU/call" % (best_plain / calls * 1e6, best_rec / calls * 1e6, alone / calls * 1e6))
dist.destroy_process_group()
