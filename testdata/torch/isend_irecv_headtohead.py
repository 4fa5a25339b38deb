# Both ranks isend, then irecv, then wait for both: fine on gloo (and MPI),
# a deadlock on NCCL, where a pair's ops run in order on one stream and each
# rank's send waits for a receive queued behind the peer's send.
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
peer = 1 - rank
out = torch.full((16,), float(rank))
got = torch.zeros(16)
s = dist.isend(out, peer)  # both ranks
r = dist.irecv(got, peer)
s.wait()
r.wait()
dist.destroy_process_group()
