# Rank 0 starts an all_reduce with async_op=True, sends to rank 1 while it
# runs, then waits for it; rank 1 receives, then joins the all_reduce
# (without async_op: the same collective). Clean: the async call returns at
# once, as on NCCL and gloo. With --nowait rank 0 never waits for it: a
# missing wait.
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.ones(4)
x = torch.zeros(2)
if rank == 0:
    work = dist.all_reduce(t, async_op=True)  # async
    dist.send(x, 1)
    if "--nowait" not in sys.argv:
        work.wait()
else:
    dist.recv(x, 0)
    dist.all_reduce(t)
dist.barrier()
dist.destroy_process_group()
