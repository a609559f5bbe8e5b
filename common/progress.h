// Waiting on peers. Two things every wait of Overpass (the transports, the shared-memory channel)
// does through this header:
// - noteProgress() whenever a wait completes, for the watchdog (shim/watchdog.h), so that a long
//   call that keeps moving is told apart from one that is stuck. The shim points the calling
//   thread's counter at its watched call for the duration of the call.
// - idle() whenever a poll found nothing to do. Inside a nonblocking collective, which runs as a
//   fiber (common/fiber.h), it hands the thread back at once; elsewhere it advances the
//   process's outstanding nonblocking collectives (the idle hook the shim installs), so that a
//   rank waiting in one collective still progresses the others its peers may be waiting for, and
//   gives the core away where asked.
#pragma once

#include <atomic>
#include <cstdint>

namespace overpass {

// How many fruitless polls a wait makes before it yields the core between polls where ranks
// outnumber cores and a spinning wait would starve the very peer it waits for: the PMPI
// transport's, and the nonblocking engine's in the MPI library's progress loop. No wait gives the
// core away where ranks fit the cores (shm/channel.h and shim/pmpi_transport.cc say why).
inline constexpr int kPollsBeforeYield = 256;

// Counts completed waits: for the watchdog, and for the nonblocking engine, which tells a round
// that moved from one that did not by it. Not inlined: a fiber may resume on another thread, and
// the thread-local counter must be found afresh.
void noteProgress();
std::uint64_t progressEvents();
// The calling thread's counter for noteProgress (null: none); returns the previous one.
std::atomic<std::uint64_t>* setProgressCounter(std::atomic<std::uint64_t>* counter);

// A poll found nothing to do: see above. `yieldCore`: outside a fiber, also give the core away.
void idle(bool yieldCore);

// Whether the calling thread waits for nonblocking collectives to complete (MPI_Wait and the
// like): the operations it resumes then poll a while before they hand the thread back, as a
// blocking call's wait does, rather than at every poll (which would make each poll a pass of the
// engine). Not inlined, for the reason noteProgress is not. setEagerWait returns the previous
// value.
bool eagerWait();
bool setEagerWait(bool on);

// Installs the function idle() runs outside fibers (null: none).
void setIdleHook(void (*hook)());

}  // namespace overpass
