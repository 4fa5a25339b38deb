# Rank 0 starts a broadcast of its tensor with async_op=True and writes the
# tensor before work.wait(): which values the others get depends on when
# the backend read it. The recording hashes the send side of an async
# collective at the call and at wait(): an in-flight-mutation naming the
# broadcast. With --fixed the write comes after wait(): clean.
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.arange(1 << 10, dtype=torch.float32)
work = dist.broadcast(t, src=0, async_op=True)  # async broadcast
if rank == 0 and "--fixed" not in sys.argv:
    t.add_(1)  # written while in flight
work.wait()
t.add_(1)
dist.destroy_process_group()
