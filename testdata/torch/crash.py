# Rank 1 fails between its calls (an uncaught exception) while rank 0
# waits for its message: recorded as a crash with rank 1's line.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.zeros(4)
if rank == 0:
    dist.recv(t, 1)
else:
    raise ValueError("bad batch")  # uncaught
dist.destroy_process_group()
