# Rank 0 writes its tensor after isend and before wait(): what rank 1 gets
# depends on when the backend read it.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
t = torch.zeros(1 << 16)
if rank == 0:
    work = dist.isend(t, 1)
    t.add_(1)  # the tensor is still in flight
    work.wait()
else:
    dist.recv(t, 0)
dist.destroy_process_group()
