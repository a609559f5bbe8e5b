// The start-up hello: before Overpass makes its first collective call or creates its first
// communicator, it checks that every rank of the world runs Overpass too. A rank without the
// library (LD_PRELOAD passed to some ranks only, an MPMD launch of different programs) would pair
// Overpass's start-up collectives with the application's own calls, and the job would hang or
// compute garbage. Every rank sends a hello to world rank 0 on a reserved tag of MPI_COMM_WORLD;
// rank 0 waits for all of them until a deadline, then answers each rank that said hello with the
// number of ranks missing. Everything is polled against deadlines, so a missing rank, rank 0
// included, stops the job with a message instead of a hang.
#pragma once

namespace overpass::shim {

// Returns when every rank runs Overpass; otherwise reports the ranks that do not and aborts the
// job. `deadlineSeconds`: how long rank 0 waits for the hellos (the others wait twice as long
// for its answer).
void checkEveryRankRunsOverpass(double deadlineSeconds);

}  // namespace overpass::shim
