// The hwloc probe of this process: the only file that includes hwloc.h. Debian's hwloc has no
// CUDA/NVML plugin, so GPUs are recognised from PCI devices (NVIDIA vendor id, display or 3D
// controller class) and reported by PCI bus id.
#include <hwloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "topo/locality.h"

namespace overpass {
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;

std::string listOf(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return "";
  std::string out(text);
  std::free(text);
  return out;
}

// Logical index of the single object of `type` whose cpuset contains `set`, or -1.
int containing(hwloc_topology_t topo, hwloc_obj_type_t type, hwloc_const_bitmap_t set) {
  int found = -1;
  const int n = hwloc_get_nbobjs_by_type(topo, type);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, i);
    if (obj->cpuset && hwloc_bitmap_isincluded(set, obj->cpuset)) {
      if (found >= 0) return -1;
      found = static_cast<int>(obj->logical_index);
    }
  }
  return found;
}

// Whether an I/O object is close to the cpus the rank runs on (its nearest non-I/O ancestor
// shares some of them).
bool near(hwloc_topology_t topo, hwloc_obj_t io, hwloc_const_bitmap_t set) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topo, io);
  return !ancestor || !ancestor->cpuset || hwloc_bitmap_intersects(ancestor->cpuset, set);
}

}  // namespace

std::size_t clampCacheBytes(std::size_t reported) {
  if (reported == 0) return kMinCacheBytes;
  return std::clamp(reported, kMinCacheBytes, kMaxCacheBytes);
}

Locality probeLocality() {
  Locality loc;
  char host[256] = "";
  if (gethostname(host, sizeof(host) - 1) == 0) loc.hostname = host;
  loc.pid = static_cast<int>(getpid());
  if (std::FILE* f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
    char id[64] = "";
    if (std::fgets(id, sizeof id, f)) loc.machine.assign(id, strcspn(id, "\n"));
    std::fclose(f);
  }

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return loc;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return loc;
  }
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  hwloc_const_bitmap_t all = hwloc_topology_get_complete_cpuset(topo);
  if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0) hwloc_bitmap_copy(set, all);
  loc.bound = !hwloc_bitmap_isequal(set, all) && !hwloc_bitmap_isincluded(all, set);
  loc.cpuset = listOf(set);
  loc.nodeCores = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
  if (loc.bound) {
    loc.socket = containing(topo, HWLOC_OBJ_PACKAGE, set);
    loc.numa = containing(topo, HWLOC_OBJ_NUMANODE, set);
  } else {
    // Unbound: the node's only package / NUMA node if there is exactly one.
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) == 1) loc.socket = 0;
    if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) == 1) loc.numa = 0;
  }
  for (hwloc_obj_t obj = hwloc_get_obj_covering_cpuset(topo, set); obj; obj = obj->parent) {
    if (obj->type == HWLOC_OBJ_L3CACHE && obj->attr) {
      loc.l3Bytes = obj->attr->cache.size;
      break;
    }
  }
  if (loc.l3Bytes == 0) {
    hwloc_obj_t l3 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L3CACHE, 0);
    if (l3 && l3->attr) loc.l3Bytes = l3->attr->cache.size;
  }
  loc.l3Bytes = clampCacheBytes(loc.l3Bytes);

  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topo, pci));) {
    const unsigned cls = pci->attr->pcidev.class_id >> 8;  // 0x03: display controllers
    if (pci->attr->pcidev.vendor_id != kNvidiaVendor || cls != 0x03 || !near(topo, pci, set))
      continue;
    char id[32];
    std::snprintf(id, sizeof(id), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                  pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    loc.gpus.emplace_back(id);
  }
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topo, os));) {
    const auto t = os->attr->osdev.type;
    if ((t == HWLOC_OBJ_OSDEV_NETWORK || t == HWLOC_OBJ_OSDEV_OPENFABRICS) && os->name &&
        near(topo, os, set))
      loc.nics.emplace_back(os->name);
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return loc;
}

}  // namespace overpass
