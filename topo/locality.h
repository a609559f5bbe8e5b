// Where one rank runs: a plain record with no hwloc types in it, probed once per process
// (topo/probe.cc), exchanged over the world at initialisation, dumped to and loaded from JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace overpass {

struct Locality {
  std::string hostname;
  // The machine the rank runs on (its kernel's boot id): hosts that are containers or network
  // namespaces of one machine share its cores, so ranks crowd them when they are more than its
  // cores, whatever their hostnames.
  std::string machine;
  int socket = -1;          // package the rank is bound inside; -1: unbound or spanning several
  int numa = -1;            // NUMA node likewise
  std::string cpuset;       // the cpus the rank may run on, as a list ("0-3,8")
  bool bound = false;       // bound to fewer than all cpus of the node
  int nodeCores = 0;        // cores of the whole node
  int pid = 0;              // process id, to notice a peer on the same host that has exited
  std::size_t l3Bytes = 0;  // last-level cache seen by the rank, clamped (see kMaxCacheBytes)
  std::vector<std::string> gpus;  // nearest NVIDIA GPUs by PCI locality, as PCI bus ids
  std::vector<std::string> nics;  // nearest network / OpenFabrics devices, by OS name

  bool operator==(const Locality&) const = default;
};

// Cache sizes feed chunk sizes; virtual machines report absurd ones (a 508 MB L3 per core here).
inline constexpr std::size_t kMinCacheBytes = std::size_t{256} << 10;
inline constexpr std::size_t kMaxCacheBytes = std::size_t{64} << 20;
std::size_t clampCacheBytes(std::size_t reported);

// Probes this process with hwloc. Never fails: what cannot be read stays at its default.
Locality probeLocality();

}  // namespace overpass
