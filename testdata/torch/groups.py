# A process group of ranks 0 and 1 (an all_reduce of it, which every rank
# calls: a no-op on the others), a collective over the world, and a
# receive tested with is_completed (gloo's stays False until wait() for
# send and recv: polled alone, it spins forever). Clean.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
pair = dist.new_group([0, 1])  # every rank calls new_group
t = torch.full((4,), float(rank))
if rank == 0:
    dist.send(t, 1, group=pair)
elif rank == 1:
    dist.recv(t, 0, group=pair)
elif rank == 2:
    dist.isend(t, 3).wait()
else:
    work = dist.irecv(t, 2)
    work.is_completed()  # tested
    work.wait()
both = torch.ones(1)
dist.all_reduce(both, group=pair)  # ranks 2 and 3 are not in pair: a no-op there (no call in the trace)
total = torch.ones(1)
dist.all_reduce(total)  # an Allreduce of the world in the trace
assert total.item() == dist.get_world_size()
dist.destroy_process_group()
