#!/usr/bin/env python3
"""The job topology Overpass detects, against the MPI library's own idea of a node.

1. Without emulation, the dumped topology has exactly the nodes MPI_Comm_split_type(SHARED)
   reports.
2. With OVERPASS_TOPO_RANKS_PER_NODE=2, it has virtual nodes of 2 consecutive ranks, each inside
   one real node.
3. Loading a dumped file (OVERPASS_TOPO_FILE) and dumping again reproduces the same hierarchy.
4. A malformed file stops the job with a message naming the file and the problem, without hang:
   out-of-range integers and wrong types name the entry and the field; a FIFO or /dev/zero is
   refused as not a regular file.
usage: check_topology.py MPIEXEC LIBRARY PROGRAM NP"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

mpiexec, library, program, np_ = shlex.split(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
failures = []


def launch(*variables):
    cmd = mpiexec + ["-np", str(np_), "-x", "LD_PRELOAD=" + library]
    for v in variables:
        cmd += ["-x", v]
    print("+", " ".join(cmd + [program]), flush=True)
    run = subprocess.run(cmd + [program], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=120)
    print(run.stdout)
    return run


def real_nodes(output):
    groups = {}
    for m in re.finditer(r"rank (\d+) real_node_leader (\d+)", output):
        groups.setdefault(int(m.group(2)), []).append(int(m.group(1)))
    return sorted(sorted(g) for g in groups.values())


def check(condition, what):
    print(("ok: " if condition else "FAIL: ") + what)
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as tmp:
    plain, emulated, reloaded = (os.path.join(tmp, n) for n in ("plain", "emulated", "reloaded"))

    run = launch("OVERPASS_TOPO_DUMP=" + plain)
    check(run.returncode == 0, "run without emulation succeeds")
    real = real_nodes(run.stdout)
    dumped = json.load(open(plain))
    check(sorted(dumped["groups"]["nodes"]) == real,
          f"nodes {dumped['groups']['nodes']} are MPI_Comm_split_type's {real}")
    check(len(dumped["ranks"]) == np_, "one record per rank")

    run = launch("OVERPASS_TOPO_DUMP=" + emulated, "OVERPASS_TOPO_RANKS_PER_NODE=2")
    check(run.returncode == 0, "run with emulation succeeds")
    nodes = json.load(open(emulated))["groups"]["nodes"]
    expected = [list(range(i, min(i + 2, np_))) for i in range(0, np_, 2)]
    check(nodes == expected, f"emulated nodes {nodes} are {expected}")
    check(all(any(set(v) <= set(r) for r in real) for v in nodes),
          "every virtual node lies inside one real node")

    run = launch("OVERPASS_TOPO_FILE=" + emulated, "OVERPASS_TOPO_DUMP=" + reloaded)
    check(run.returncode == 0, "run with a loaded topology succeeds")
    before, after = json.load(open(emulated)), json.load(open(reloaded))
    check(before["groups"] == after["groups"] and before["ranks"] == after["ranks"],
          "a loaded topology reproduces the dumped one")

    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"ranks": [{"rank": 0}]}')
    run = launch("OVERPASS_TOPO_FILE=" + bad)
    check(run.returncode != 0, "a malformed topology file stops the job")
    check(f"topology file '{bad}': ranks[0] has no integer \"node\"" in run.stdout,
          "the message names the file and the problem")
    missing = os.path.join(tmp, "missing.json")
    run = launch("OVERPASS_TOPO_FILE=" + missing)
    check(run.returncode != 0 and f"cannot read topology file '{missing}'" in run.stdout,
          "a missing topology file stops the job with its name")

    # Strict reading (issue 14): integers are range-checked instead of wrapping (node 2^32 was
    # node 0), a wrong type names the entry and the field, and only regular files are read: a
    # FIFO stops the job at once instead of hanging it, /dev/zero instead of filling memory.
    ranks = [{"rank": r, "node": 0} for r in range(np_)]
    cases = [("wrap", dict(ranks[-1], node=4294967296),
              f"ranks[{np_ - 1}].node: 4294967296 is out of range: must be an integer from 0 to "
              "2147483647"),
             ("type", dict(ranks[-1], numa="0"),
              f"ranks[{np_ - 1}].numa: must be an integer from -1 to 2147483647 (it is a string)")]
    for name, last, problem in cases:
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump({"ranks": ranks[:-1] + [last]}, f)
        run = launch("OVERPASS_TOPO_FILE=" + path)
        check(run.returncode != 0 and
              f"OVERPASS_TOPO_FILE: topology file '{path}': {problem}" in run.stdout,
              f"a {name} problem stops the job, naming the field")
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        run = launch("OVERPASS_TOPO_FILE=" + path)
        check(run.returncode != 0 and
              f"OVERPASS_TOPO_FILE: cannot read topology file '{path}': not a regular file"
              in run.stdout, f"{path} is refused at once")

print("OK" if not failures else f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
