# Two bugs mpi4py programs make, found as in C (mpi4py asks for
# MPI_THREAD_MULTIPLE; its one thread calls MPI, so the shim watches
# pending receive buffers):
# - rank 1 writes the receive buffer of its pending Iallreduce before the
#   Wait: recv-buffer-write, naming the Iallreduce and the Wait;
# - the root of a Gatherv expects 3 ints from rank 1, which sends 2:
#   collective-mismatch (MPI-3.1 sec. 5.5).
# With --fixed: the write after the Wait, the counts that agree; clean.
import sys

import numpy as np
from mpi4py import MPI

fixed = "--fixed" in sys.argv
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
a = np.arange(4, dtype="i")
b = np.zeros(4, dtype="i")
req = comm.Iallreduce(a, b, op=MPI.SUM)  # iallreduce
if rank == 1 and not fixed:
    b[0] = 7
req.Wait()  # wait
b[0] = 7
counts = [2, 2 if fixed else 3]
if rank == 0:
    r = np.zeros(8, dtype="i")
    comm.Gatherv(np.arange(2, dtype="i"), [r, counts, [0, 4], MPI.INT], root=0)  # gatherv root
else:
    comm.Gatherv(np.arange(2, dtype="i"), None, root=0)  # gatherv sender
