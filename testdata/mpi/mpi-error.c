/* mpi-error (2 ranks): MPI errors in calls other than Send to a bad rank, each the first p2p call of its rank, with the other rank still starting up (so the job can end before it created its segment): send-init-tag: rank 0's MPI_Send_init with tag -5 (MPI_ERR_TAG); recv-init-tag: rank 1's MPI_Recv_init with tag -5; send-null-type: rank 0's MPI_Send with MPI_DATATYPE_NULL (MPI_ERR_TYPE); recv-null-type: rank 1's MPI_Recv with MPI_DATATYPE_NULL; bcast-root: rank 0's MPI_Bcast with root 7 (rank 1's, root 0, waits); comm-null: rank 0's MPI_Send on MPI_COMM_NULL (MPI_ERR_COMM; rank 1's MPI_Recv waits). gather-null: rank 0, the root, gathers into a receive buffer it never allocated (NULL, with MPI_INT: no buffer); Open MPI does not check it in a collective and the root dies of SIGSEGV in MPI_Gather (exit 139); the shim fails the call with MPI_ERR_BUFFER, as Open MPI does for a Send's NULL buffer. A refused call took no effect: it is left out of the trace, so check reports the invalid call and nothing that would follow from replaying it (a type mismatch, a deadlock under sync). allreduce-null-type: rank 0's MPI_Allreduce with a datatype handle that is NULL (never set): Open MPI refuses MPI_DATATYPE_NULL but reads through a NULL handle in its reductions and crashes (SIGSEGV, exit 139); the shim fails the call with MPI_ERR_TYPE. scan-null, allgatherv-null, igather-null: rank 0's MPI_Scan from a NULL send buffer, MPI_Allgatherv into a NULL receive buffer, and, as the root, MPI_Igather into one (crashes in Open MPI, exit 139): MPI_ERR_BUFFER, as gather-null. Under MPI_ERRORS_ARE_FATAL Open MPI aborts the job; mpirun exits with the error class (4 MPI_ERR_TAG, 3 MPI_ERR_TYPE, 8 MPI_ERR_ROOT, 5 MPI_ERR_COMM). Fix: mpi-error-fixed. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, buf[4] = {1, 2, 3, 4};
	const char *mode = argc > 1 ? argv[1] : "send-init-tag";
	MPI_Request req;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi-error: needs 2 ranks, got %d\n", size);
		MPI_Finalize();
		return 2;
	}
	if (strcmp(mode, "send-init-tag") == 0) {
		if (rank == 0) {
			MPI_Send_init(buf, 4, MPI_INT, 1, -5, MPI_COMM_WORLD, &req); // culprit: send-init
			MPI_Start(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			MPI_Request_free(&req);
		} else {
			MPI_Recv(buf, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
	} else if (strcmp(mode, "recv-init-tag") == 0) {
		if (rank == 1) {
			MPI_Recv_init(buf, 4, MPI_INT, 0, -5, MPI_COMM_WORLD, &req); // culprit: recv-init
			MPI_Start(&req);
			MPI_Wait(&req, MPI_STATUS_IGNORE);
			MPI_Request_free(&req);
		} else {
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
		}
	} else if (strcmp(mode, "send-null-type") == 0) {
		if (rank == 0)
			MPI_Send(buf, 4, MPI_DATATYPE_NULL, 1, 0, MPI_COMM_WORLD); // culprit: send
		else
			MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "recv-null-type") == 0) {
		if (rank == 1)
			MPI_Recv(buf, 4, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); // culprit: recv
		else
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "bcast-root") == 0) {
		if (rank == 0)
			MPI_Bcast(buf, 4, MPI_INT, 7, MPI_COMM_WORLD); // culprit: bcast
		else
			MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (strcmp(mode, "comm-null") == 0) {
		if (rank == 0)
			MPI_Send(buf, 4, MPI_INT, 1, 0, MPI_COMM_NULL); // culprit: send-comm-null
		else
			MPI_Recv(buf, 4, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (strcmp(mode, "gather-null") == 0) {
		int *all = NULL; /* the root was to allocate 2 ints here */
		MPI_Gather(buf, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD); // culprit: gather-null
	} else if (strcmp(mode, "allreduce-null-type") == 0) {
		MPI_Datatype type = rank == 0 ? (MPI_Datatype)0 : MPI_INT; /* rank 0's was never set */
		int sum = 0;
		MPI_Allreduce(buf, &sum, 1, type, MPI_SUM, MPI_COMM_WORLD); // culprit: allreduce-null-type
	} else if (strcmp(mode, "scan-null") == 0) {
		int *mine = rank == 0 ? NULL : buf, prefix = 0; /* rank 0's was never allocated */
		MPI_Scan(mine, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // culprit: scan-null
	} else if (strcmp(mode, "allgatherv-null") == 0) {
		int counts[2] = {1, 1}, displs[2] = {0, 1}, all[2], *at = rank == 0 ? NULL : all;
		MPI_Allgatherv(buf, 1, MPI_INT, at, counts, displs, MPI_INT, MPI_COMM_WORLD); // culprit: allgatherv-null
	} else if (strcmp(mode, "igather-null") == 0) {
		int *all = NULL; /* the root was to allocate 2 ints here */
		MPI_Igather(buf, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD, &req); // culprit: igather-null
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		if (rank == 0)
			fprintf(stderr, "mpi-error: unknown mode %s\n", mode);
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		printf("mpi-error: ok\n");
	MPI_Finalize();
	return 0;
}
