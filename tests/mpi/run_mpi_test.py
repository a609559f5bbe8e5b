#!/usr/bin/env python3
"""Runs an unmodified MPI program under mpirun with liboverpass.so preloaded, and checks what
happened: the exit status, the output, and the OVERPASS_STATS JSON (which collectives Overpass
served itself, which fell back and why). A preload that silently does nothing fails here."""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mpiexec", required=True,
                   help="the launcher, with options of its own (split like a shell command)")
    p.add_argument("--library", required=True)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for every rank")
    p.add_argument("--mpmd-env", action="append", default=[],
                   help="NAME=VALUE for the second half of the ranks only (MPMD launch)")
    p.add_argument("--served", default="", help="collectives Overpass must have served itself")
    p.add_argument("--reason", action="append", default=[],
                   help="a fallback reason that must appear in the statistics")
    p.add_argument("--only-pmpi", nargs="?", const="", default=None, metavar="EXCEPT",
                   help="every call must have gone to PMPI, except those of the collectives "
                        "EXCEPT names (space-separated)")
    p.add_argument("--device-calls", default="",
                   help="collectives that must have been called with device buffers")
    p.add_argument("--expect-fail", action="store_true", help="the job must exit non-zero")
    p.add_argument("--any-exit", action="store_true",
                   help="judge by the output only (mpirun --enable-recovery exits 0 even when "
                        "ranks abort)")
    p.add_argument("--expect-output", action="append", default=[], help="regex in the output")
    p.add_argument("--reject-output", action="append", default=[],
                   help="regex that must not be in the output")
    p.add_argument("--no-preload", action="store_true",
                   help="run without Overpass (the program's own checks only)")
    p.add_argument("--mpirun-arg", action="append", default=[],
                   help="an extra mpirun option (e.g. --enable-recovery)")
    p.add_argument("--algorithm", action="append", default=[],
                   help="COLL=NAME: the statistics must show NAME serving calls of COLL")
    p.add_argument("--at-least", action="append", default=[],
                   help="COLL=ALGORITHM=N: the algorithm served at least N calls (all ranks)")
    p.add_argument("--fused", action="append", default=[],
                   help="COLL: some calls of it were served in fused groups (OVERPASS_FUSION)")
    p.add_argument("--reason-count", action="append", default=[],
                   help="REASON=N: exactly N calls (all ranks, all collectives) fell back for it")
    p.add_argument("--no-algorithm", action="append", default=[],
                   help="COLL=NAME: the statistics must show NAME serving no call of COLL")
    p.add_argument("--force-round", type=int,
                   help="force, through OVERPASS_TUNE, the K-th Overpass algorithm of every "
                        "collective (modulo their number; the list from overpass-info --info); "
                        "each must serve calls, or the debug log must say why it could not")
    p.add_argument("--info", help="the overpass-info program, for --force-round")
    p.add_argument("--no-shm-leftovers", action="store_true",
                   help="after the job, no /dev/shm/overpass-PID-* may exist, PID from the "
                        "program's 'rank 0 pid PID' line")
    p.add_argument("--unpreloaded", choices=["first", "second"],
                   help="MPMD launch in which that half of the ranks runs without the library")
    p.add_argument("--ends-within", nargs=2, metavar=("REGEX", "SECONDS"),
                   help="the job must end within SECONDS after the first output line matching "
                        "REGEX")
    p.add_argument("--no-stats", action="store_true",
                   help="run without OVERPASS_STATS (a job's path without statistics); no "
                        "statistics checked")
    p.add_argument("--timeout", type=int, default=240)
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    command = a.command[1:] if a.command and a.command[0] == "--" else a.command
    mpiexec = shlex.split(a.mpiexec)

    forced = {}
    if a.force_round is not None:
        algorithms = registry(a.info)
        forced = {c: names[a.force_round % len(names)] for c, names in algorithms.items()}
        most = max(len(names) for names in algorithms.values())
        if most > ROUNDS:
            print(f"FAIL: a collective has {most} algorithms; tests/mpi/CMakeLists.txt runs "
                  f"only {ROUNDS} rounds")
            return 1
        a.env += ["OVERPASS_TUNE=" + "#".join(f"{c}:@{n}" for c, n in forced.items()),
                  "OVERPASS_LOG=debug"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats.json")
        preload = [] if a.no_preload else ["-x", "LD_PRELOAD=" + a.library]
        exports = list(preload)
        checked = not (a.expect_fail or a.no_preload or a.any_exit or a.no_stats)
        if checked:
            exports += ["-x", "OVERPASS_STATS=" + stats]
        for kv in a.env:
            exports += ["-x", kv]
        if a.unpreloaded:
            halves = [preload + exports[len(preload):], ["-x", "LD_PRELOAD="] + exports[len(preload):]]
            if a.unpreloaded == "first":
                halves.reverse()
            first = a.np - a.np // 2
            launch = mpiexec + ["-np", str(first)] + halves[0] + command + [":"]
            launch += ["-np", str(a.np // 2)] + halves[1] + command
        elif a.mpmd_env:
            first = a.np - a.np // 2
            launch = mpiexec + ["-np", str(first)] + exports + command + [":"]
            launch += ["-np", str(a.np // 2)] + exports
            for kv in a.mpmd_env:
                launch += ["-x", kv]
            launch += command
        else:
            launch = mpiexec + a.mpirun_arg + ["-np", str(a.np)] + exports + command
        print("+", " ".join(launch), flush=True)
        run = run_timed(launch, env, a.timeout, a.ends_within[0] if a.ends_within else None)
        if run is None:
            print(f"FAIL: no result after {a.timeout} s (a hang is a correctness bug)")
            return 1
        print(run.stdout)
        failures = []
        if a.ends_within:
            if run.marked is None:
                failures.append(f"no output line matches /{a.ends_within[0]}/")
            else:
                print(f"the job ended {run.marked:.2f} s after /{a.ends_within[0]}/")
                if run.marked > float(a.ends_within[1]):
                    failures.append(f"the job ended {run.marked:.2f} s after the mark, "
                                    f"more than {a.ends_within[1]} s")
        if a.expect_fail and run.returncode == 0:
            failures.append("the job was expected to fail but exited 0")
        if not a.expect_fail and not a.any_exit and run.returncode != 0:
            failures.append(f"exit status {run.returncode}")
        if a.no_shm_leftovers:
            m = re.search(r"rank 0 pid (\d+)", run.stdout)
            if not m:
                failures.append("no 'rank 0 pid' line in the output")
            else:
                left = [f for f in os.listdir("/dev/shm") if f.startswith(f"overpass-{m[1]}-")]
                if left:
                    failures.append(f"shared-memory segments left behind: {left}")
        for pattern in a.expect_output:
            if not re.search(pattern, run.stdout):
                failures.append(f"output lacks /{pattern}/")
        for pattern in a.reject_output:
            if re.search(pattern, run.stdout):
                failures.append(f"output has /{pattern}/")
        if checked:
            failures += check_stats(stats, a)
            failures += check_forced(stats, forced, run.stdout)
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("OK")
    return 1 if failures else 0


class Run:
    def __init__(self, stdout, returncode, marked):
        self.stdout, self.returncode, self.marked = stdout, returncode, marked


def run_timed(launch, env, timeout, mark):
    """Runs the job, reading its output as it comes: the Run (with `marked`, the seconds from
    the first line matching `mark` to the end of the job), or None after `timeout` seconds."""
    proc = subprocess.Popen(launch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    lines, marked_at = [], []
    def read():
        for line in proc.stdout:
            if mark and not marked_at and re.search(mark, line):
                marked_at.append(time.monotonic())
            lines.append(line)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        reader.join(5)
        print("".join(lines))
        return None
    ended = time.monotonic()
    reader.join(10)
    return Run("".join(lines), proc.returncode, ended - marked_at[0] if marked_at else None)


ROUNDS = 9  # the rounds of tests/mpi/CMakeLists.txt's forced-algorithm tests


def registry(info):
    """{collective: [Overpass algorithm names]} from overpass-info's algorithm list (the device
    algorithms, which no rule can force, left out)."""
    out = subprocess.run([info], stdout=subprocess.PIPE, text=True).stdout
    section = out.split("# Algorithms", 1)[1].split("\n\n", 1)[0]
    algorithms = {}
    for line in section.splitlines()[1:]:
        coll, name = line.split()[:2]
        if name != "pmpi" and "[device]" not in line:
            algorithms.setdefault(coll, []).append(name)
    return algorithms


def check_forced(path, forced, output):
    if not forced or not os.path.exists(path):
        return []
    with open(path) as f:
        colls = json.load(f)["collectives"]
    failures = []
    for coll, name in forced.items():
        served = colls.get(coll, {}).get("algorithms", {}).get(name, 0)
        skipped = re.search(rf"debug: {coll} of \d+ bytes on \d+ ranks: rule '{coll}:@{name}' "
                            rf"skipped", output)
        if coll in colls and served == 0 and not skipped:
            failures.append(f"{coll}: forced {name} served no call and no skip was logged "
                            f"({colls[coll].get('algorithms')})")
        print(f"forced {coll}:@{name}: served {served} calls"
              + (", skipped for some" if skipped else ""))
    return failures


def check_stats(path, a):
    if not os.path.exists(path):
        return ["no OVERPASS_STATS file: was liboverpass.so loaded and MPI_Init intercepted?"]
    with open(path) as f:
        colls = json.load(f)["collectives"]
    failures = []
    for spec in a.algorithm:
        coll, name = spec.split("=")
        if colls.get(coll, {}).get("algorithms", {}).get(name, 0) == 0:
            failures.append(f"{coll}: {name} served no call ({colls.get(coll)})")
    for spec in a.no_algorithm:
        coll, name = spec.split("=")
        if colls.get(coll, {}).get("algorithms", {}).get(name, 0) != 0:
            failures.append(f"{coll}: {name} served calls ({colls.get(coll)})")
    for name in a.served.split():
        algorithms = colls.get(name, {}).get("algorithms", {})
        if not any(n != "pmpi" and c > 0 for n, c in algorithms.items()):
            failures.append(f"{name}: no call served by an Overpass algorithm ({algorithms})")
    for name in a.device_calls.split():
        if colls.get(name, {}).get("device_calls", 0) == 0:
            failures.append(f"{name}: no call recorded with device buffers ({colls.get(name)})")
    for spec in a.at_least:
        coll, name, n = spec.split("=")
        got = colls.get(coll, {}).get("algorithms", {}).get(name, 0)
        if got < int(n):
            failures.append(f"{coll}: {name} served {got} calls, fewer than {n} ({colls.get(coll)})")
    for name in a.fused:
        if colls.get(name, {}).get("fused_calls", 0) == 0:
            failures.append(f"{name}: no call fused ({colls.get(name)})")
    for spec in a.reason_count:
        reason, n = spec.split("=")
        got = sum(c.get("fallback_reasons", {}).get(reason, 0) for c in colls.values())
        if got != int(n):
            failures.append(f"fallback reason '{reason}': {got} calls, expected {n}")
    reasons = {r for c in colls.values() for r in c.get("fallback_reasons", {})}
    for r in a.reason:
        if r not in reasons:
            failures.append(f"fallback reason '{r}' never recorded (saw {sorted(reasons)})")
    if a.only_pmpi is not None:
        for name, c in colls.items():
            if name not in a.only_pmpi.split() and set(c["algorithms"]) != {"pmpi"}:
                failures.append(f"{name}: served by {c['algorithms']} although all must be pmpi")
    if not colls and (a.served or a.only_pmpi is not None or a.device_calls or a.fused):
        failures.append("no collective recorded at all")
    return failures


if __name__ == "__main__":
    sys.exit(main())
