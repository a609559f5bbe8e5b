#!/usr/bin/env python3
"""A host fails while the job runs, on a rig of its own (2 hosts x 2 ranks), and the job must end
within its bound, with the report the case calls for; then the rig goes down leaving nothing.

  check_fault.py --rig K --dir DIR --program check_fault_loop --case CASE [--env NAME=VALUE]...
                 [--within SECONDS] [--expect-output REGEX]...

CASE: link-down  host1's link goes down once every rank is in the loop (TCP reports nothing
                 for minutes then: only OVERPASS_TIMEOUT can end the job);
      kill       host1's ranks are killed (SIGKILL) once every rank is in the loop;
      unreachable host1's link is down before the launch: netns-run must refuse, naming it.
Exit 77 where no rig can be made here (skipped)."""
import argparse
import os
import re
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")


def sh(*cmd, check=True):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rig", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--program", required=True)
    p.add_argument("--library", required=True)
    p.add_argument("--case", required=True, choices=["link-down", "kill", "unreachable"])
    p.add_argument("--coll", default="allreduce")
    p.add_argument("--bytes", default="65536")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--within", type=float, default=30.0,
                   help="the job must end this many seconds after the fault")
    p.add_argument("--expect-output", action="append", default=[])
    a = p.parse_args()
    os.environ["NETNS_RIG"] = a.rig
    fixture = os.path.join(HERE, "rig_fixture.sh")
    up = subprocess.run([fixture, "up", a.rig, a.dir, "2"], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    print(up.stdout, end="")
    if up.returncode == 77:
        return 77
    failures = []
    try:
        if up.returncode != 0:
            failures.append("the rig did not come up")
        else:
            failures += run_case(a)
    finally:
        down = subprocess.run([fixture, "down", a.rig, a.dir], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        print(down.stdout, end="")
        if down.returncode != 0:
            failures.append("down left something behind")
    for f in failures:
        print("FAIL:", f)
    print("OK" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


def run_case(a):
    prefix = "opx" + ("" if a.rig == "0" else a.rig)
    link_down = ["ip", "-n", f"{prefix}-host1", "link", "set", "opx0", "down"]
    launch = [os.path.join(SCRIPTS, "netns-run"), "--no-overpass", "-np", "4",
              "-x", "LD_PRELOAD=" + a.library]
    for kv in a.env:
        launch += ["-x", kv]
    launch += [a.program, a.coll, a.bytes, "60"]
    failures = []
    if a.case == "unreachable":
        sh(*link_down)
        run = subprocess.run(launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=60)
        print(run.stdout)
        if run.returncode == 0:
            failures.append("netns-run launched although host1 was unreachable")
        if not re.search(r"not reachable from the head, nothing launched: host1 \(", run.stdout):
            failures.append("netns-run did not name host1 as unreachable")
        if "looping" in run.stdout:
            failures.append("the program started")
        return failures

    print("+", " ".join(launch), flush=True)
    proc = subprocess.Popen(launch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines, looping = [], threading.Event()

    def read():
        for line in proc.stdout:
            lines.append(line)
            if sum("looping" in x for x in lines) == 4:
                looping.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not looping.wait(120):
        proc.kill()
        print("".join(lines))
        return ["the ranks did not all start looping within 120 s"]
    time.sleep(0.5)
    if a.case == "link-down":
        sh(*link_down)
    else:
        pids = [int(m[1]) for m in re.finditer(r"rank [23] on host1 pid (\d+) looping",
                                               "".join(lines))]
        for pid in pids:
            print(f"+ kill -KILL {pid}", flush=True)
            os.kill(pid, 9)
    fault = time.monotonic()
    try:
        proc.wait(timeout=a.within)
        took = time.monotonic() - fault
        print(f"the job ended {took:.1f} s after the fault, exit status {proc.returncode}")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        failures.append(f"the job did not end within {a.within} s of the fault")
    reader.join(5)
    out = "".join(lines)
    print(out)
    if proc.returncode == 0:
        failures.append("the job exited 0 after a fault")
    if "no fault seen" in out:
        failures.append("the program went on as if nothing happened")
    for pattern in a.expect_output:
        if not re.search(pattern, out):
            failures.append(f"output lacks /{pattern}/")
    return failures


if __name__ == "__main__":
    sys.exit(main())
