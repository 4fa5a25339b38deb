# A ring exchange through batch_isend_irecv: every rank sends to the next
# and receives from the previous in one batch. Clean on gloo and on NCCL.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
size = dist.get_world_size()
out = torch.full((32,), float(rank))
got = torch.zeros(32)
ops = [dist.P2POp(dist.isend, out, (rank + 1) % size), dist.P2POp(dist.irecv, got, (rank - 1) % size)]
for work in dist.batch_isend_irecv(ops):
    work.wait()
assert got[0].item() == float((rank - 1) % size)
dist.barrier()
dist.destroy_process_group()
