// Package python holds p2ptrace's recorder for Python programs that use
// torch.distributed: plain Python (standard library only) embedded in the
// binary, written by Install to a cache directory that p2ptrace puts first on
// the ranks' PYTHONPATH. Its sitecustomize.py wraps torch.distributed's
// point-to-point calls (send, recv, isend, irecv, batch_isend_irecv,
// Work.wait, Work.is_completed, barrier, new_group, destroy_process_group)
// and the other collectives (recorded as the shim records their MPI
// counterparts: all_reduce an Allreduce with its op, broadcast a Bcast with
// its root, and so on), and writes each rank's calls to a segment file in
// the MPI shim's format, version 3 (recorder/mpi, FORMAT): the merge, the
// live hang monitor and everything after them are shared with MPI programs.
//
// Sites are the user's .py file:line (the first frame outside torch and the
// recorder), carried in site records of the segment. Payload hashes are
// BLAKE2b-64 | 1 (hashlib; XXH64 has no standard library module): the merge
// compares only the hashes of one send at post and at completion, both taken
// by the same rank with the same rule.
package python
