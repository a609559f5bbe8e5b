#!/usr/bin/env python3
"""overpass-check on real hosts (network namespaces, scripts/netns-cluster): a healthy rig, one
host's link slowed with tc, one host's link taken down after the ranks started. Brings up its
own rig (NETNS_RIG, default 1) and always takes it down, also after a failure or a signal; never
touches a rig it did not bring up. Exit 77 (skip) where namespaces cannot be made (not root).

  check_overpass_check.py MODE --source DIR --check PATH [--library PATH] [options]

MODE: healthy (exit 0, both matrices name every host), slow (host1's link at 100 Mbit/s: host1
named slow, exit 1), down (host1's link down once the tests are about to start: the check ends
within its --timeout, names host1 unreachable, exit 3), down-midrun (the link goes down while
the tests run).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77


class Failure(Exception):
    pass


def log(msg):
    print(msg, flush=True)


class Rig:
    def __init__(self, source, rig):
        self.scripts = os.path.join(source, "scripts")
        self.rig = str(rig)
        self.prefix = "opx" if self.rig == "0" else "opx" + self.rig
        self.env = dict(os.environ, NETNS_RIG=self.rig)
        self.up_done = False

    def cluster(self, *args, timeout=120, check=True):
        p = subprocess.run([os.path.join(self.scripts, "netns-cluster"), *args], env=self.env,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure(f"netns-cluster {' '.join(args)}: exit {p.returncode}: "
                          f"{p.stdout}{p.stderr}")
        return p

    def up(self, *args):
        if self.cluster("status", check=False).returncode == 0:
            raise Failure(f"rig {self.rig} is already up (someone else's, or a run left it): "
                          f"NETNS_RIG={self.rig} scripts/netns-cluster down, if it is yours")
        self.up_done = True  # from here on, down (netns-cluster up removes a partial rig itself)
        log(self.cluster("up", *args).stdout.strip())

    def down(self):
        if not self.up_done:
            return
        p = self.cluster("down", timeout=120, check=False)
        log(f"netns-cluster down: exit {p.returncode} {p.stdout.strip()} {p.stderr.strip()}")
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        mine = [line.split()[0] for line in left.splitlines()
                if re.match(rf"^{re.escape(self.prefix)}-(bridge|head|host[0-9]+)\b", line)]
        if p.returncode != 0 or mine:
            raise Failure(f"namespaces left behind: {mine}")

    def ns(self, name, *cmd):
        subprocess.run(["ip", "netns", "exec", f"{self.prefix}-{name}", *cmd], check=True,
                       timeout=30)


class Job:
    """netns-run in its own process group, its output collected line by line with timestamps."""

    def __init__(self, rig, args, library, overpass):
        cmd = [os.path.join(rig.scripts, "netns-run")]
        if not overpass:
            cmd.append("--no-overpass")
        cmd += args
        env = dict(rig.env)
        # netns-run passes every OVERPASS_* variable to the ranks, OVERPASS_LIBRARY too (which
        # Overpass then warns about): set only where the library is not netns-run's default.
        default = os.path.join(rig.scripts, "..", "build", "shim", "liboverpass.so")
        if library and os.path.realpath(library) != os.path.realpath(default):
            env["OVERPASS_LIBRARY"] = library
        log("$ " + " ".join(cmd))
        self.start = time.monotonic()
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines = []  # (seconds since start, line)
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append((time.monotonic() - self.start, line.rstrip("\n")))
            print(f"  | {line}", end="", flush=True)

    def output(self):
        with self.lock:
            return "\n".join(line for _, line in self.lines)

    def wait_line(self, pattern, timeout):
        """Seconds since start at which a line matching `pattern` appeared, or None."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                for t, line in self.lines:
                    if re.search(pattern, line):
                        return t
            if time.monotonic() >= deadline or (self.proc.poll() is not None and
                                                not self.reader.is_alive()):
                return None
            time.sleep(0.05)

    def wait(self, timeout):
        """mpirun's exit status, or None if it had to be killed after `timeout` seconds."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None
        self.reader.join(timeout=10)
        return rc

    def kill(self):
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=5)
                return
            except subprocess.TimeoutExpired:
                pass


def expect(cond, what, out=""):
    if not cond:
        raise Failure(what + ("\n--- output ---\n" + out if out else ""))
    log(f"ok   {what}")


def matrix_hosts(out, title):
    """The column headers of the matrix after the line starting with `title`."""
    # Overpass's own messages (stderr) may fall between the lines of the check's report (stdout).
    lines = [line for line in out.splitlines() if not line.startswith("[overpass ")]
    for i, line in enumerate(lines):
        if line.startswith(title) and i + 1 < len(lines):
            return lines[i + 1].split()
    return []


def check_no_overpass_error(out):
    # Among them, none may be an error: the job ends with every endpoint closed in turn, which is
    # not a failure (a peer closing first once was reported as one).
    expect(re.search(r"^\[overpass \d+\] error:", out, re.M) is None, "no Overpass error", out)


def check_matrices(out, hosts):
    for title in ("Latency, us", "Bandwidth, MB/s"):
        cols = [c for c in matrix_hosts(out, title) if c != "from\\to"]
        expect(cols == hosts, f"the {title.split(',')[0].lower()} matrix has a column for every "
               f"host ({cols})", out)
        for h in hosts:
            expect(re.search(rf"^  {h} +\S", out, re.M) is not None, f"a row for {h}", out)


def run_healthy(rig, a, overpass, hosts_spec, tmp):
    counts = [int(x) for x in hosts_spec.split(",")]
    rig.up(str(len(counts)), "--ranks-per-host", hosts_spec)
    hosts = [f"host{i}" for i in range(len(counts))]
    json_path = os.path.join(tmp, "check.json")
    args = ["-np", str(sum(counts)), a.check, "--json", json_path]
    if a.start_delay:
        args += ["--start-delay", str(a.start_delay)]
    job = Job(rig, args, a.library, overpass)
    rc = job.wait(a.job_timeout)
    out = job.output()
    expect(rc == 0, f"exit status 0 (got {rc})", out)
    if a.start_delay:
        header = job.wait_line(r"^overpass-check: testing.*starting in", 0)
        verdict = job.wait_line(r"^overpass-check: OK", 0)
        expect(header is not None and verdict is not None and verdict - header >= a.start_delay,
               f"the tests waited --start-delay {a.start_delay} s", out)
    expect(re.search(r"^overpass-check: OK: %d hosts, %d ranks" % (len(counts), sum(counts)), out,
                     re.M) is not None, "the OK line", out)
    check_matrices(out, hosts)
    check_no_overpass_error(out)
    expect("between hosts: network (" in out and "within a host: shared memory" in out,
           "the transports are named", out)
    with open(json_path) as f:
        j = json.load(f)
    expect([h["name"] for h in j["hosts"]] == hosts, "--json lists the hosts")
    pairs = [t for t in j["tests"] if t["kind"] == "network"]
    shm = [t for t in j["tests"] if t["kind"] == "shm"]
    expect(len(pairs) == len(hosts) * (len(hosts) - 1) // 2 and
           all(t["state"] == "ok" and min(t["bandwidth_MBps"]) > 0 for t in pairs),
           f"--json: every host pair measured ({len(pairs)})")
    expect(len(shm) == sum(c - 1 for c in counts) and all(t["state"] == "ok" for t in shm),
           f"--json: every rank's shared-memory path measured ({len(shm)})")
    # Each direction is judged by its best message over the share of the time its sides had a
    # CPU (at most 4x the measured figure).
    credited = [(best / (1 - min(max(wait, 0), 0.75)), judged)
                for t in pairs + shm
                for best, wait, judged in zip(t["best_bandwidth_MBps"], t["cpu_wait"]["bandwidth"],
                                              t["judged_bandwidth_MBps"])]
    expect(all(abs(c - judged) <= 1e-6 * c for c, judged in credited),
           f"--json: the judged bandwidths credit the waits for a CPU {credited}")
    expect(j["exit_code"] == 0, "--json: exit_code 0")


def shape(rig, host, rate):
    rig.ns(host, "tc", "qdisc", "add", "dev", "opx0", "root", "tbf", "rate", rate, "burst", "1mb",
           "latency", "50ms")
    rig.ns("bridge", "tc", "qdisc", "add", "dev", host, "root", "tbf", "rate", rate, "burst",
           "1mb", "latency", "50ms")


def run_slow(rig, a, overpass, tmp):
    rig.up("3")
    shape(rig, "host1", "100mbit")
    json_path = os.path.join(tmp, "check.json")
    job = Job(rig, ["-np", "6", a.check, "--json", json_path], a.library, overpass)
    rc = job.wait(a.job_timeout)
    out = job.output()
    expect(rc == 1, f"exit status 1 (got {rc})", out)
    expect(re.search(r"^  slow host: host1 ", out, re.M) is not None, "host1 named slow", out)
    for pair in ("host0 <-> host1", "host1 <-> host2"):
        expect(re.search(rf"^  slow: {pair} ", out, re.M) is not None, f"{pair} named slow", out)
    expect(re.search(r"^  slow: host0 <-> host2 ", out, re.M) is None, "host0 <-> host2 not slow",
           out)
    expect(re.search(r"^overpass-check: FAILED \(exit 1\)", out, re.M) is not None,
           "the FAILED line", out)
    check_matrices(out, ["host0", "host1", "host2"])
    check_no_overpass_error(out)
    with open(json_path) as f:
        j = json.load(f)
    slow = sorted(tuple(t["hosts"]) for t in j["tests"]
                  if t["kind"] == "network" and any(t["slow"]["bandwidth"]))
    expect(slow == [("host0", "host1"), ("host1", "host2")], f"--json: the slow pairs {slow}")


def run_down(rig, a, overpass, midrun):
    rig.up("3")
    # The rig's launcher gives up on a host whose link is down 6 to 11 s after the loss (the
    # keepalive scripts/netns-run sets) and ends the job: the check must have reported by then,
    # hence a --pair-timeout of 2 s (the default, 5 s, suits real clusters, whose launchers wait
    # for minutes). The link goes down as the tests start, or (midrun) during them.
    timeout, pair_timeout, delay = 20, 2, 0
    args = ["-np", "6", a.check, "--timeout", str(timeout), "--pair-timeout", str(pair_timeout)]
    if midrun:
        args += ["--size", "64M"]
    job = Job(rig, args, a.library, overpass)
    try:
        started = job.wait_line(r"^overpass-check: testing", 60)
        expect(started is not None, "the tests start", job.output())
        if midrun:
            time.sleep(0.5)
        down_at = time.monotonic() - job.start
        rig.ns("host1", "ip", "link", "set", "opx0", "down")
        log(f"     host1's link down at {down_at:.1f} s (tests started at {started:.1f} s)")
        verdict = job.wait_line(r"^overpass-check: (FAILED|OK)", delay + timeout + 15)
        out = job.output()
        expect(verdict is not None, "a verdict", out)
        took = verdict - started
        log(f"     verdict {took:.1f} s after the tests started (timeout {timeout} s, start delay "
            f"{delay} s)")
        expect(took <= delay + timeout + 1.5, f"the check ends within its timeout ({took:.1f} s)",
               out)
        rc = job.wait(40)
        out = job.output()
        ended = time.monotonic() - job.start
        log(f"     mpirun {'exit status ' + str(rc) if rc is not None else 'killed'} at "
            f"{ended:.1f} s")
    finally:
        job.kill()
    expect(re.search(r"^overpass-check: FAILED \(exit 3\)", out, re.M) is not None,
           "the FAILED line, exit 3", out)
    expect(re.search(r"^  unreachable: host host1 \(ranks 2-3\)", out, re.M) is not None,
           "host1 named unreachable", out)
    expect(re.search(r"^  unreachable: host host(0|2) ", out, re.M) is None,
           "no other host named unreachable", out)
    expect(re.search(r"^  (unreachable|not done): host0 <-> host2 ", out, re.M) is None,
           "host0 <-> host2 measured", out)
    expect("MPI_Abort(3)" in out, "the job ended with MPI_Abort(3)", out)
    # mpirun's own end is Open MPI's: where it still waits for the lost host's daemon after 40 s
    # (a kernel whose tcp_retries2 is not per namespace), it was killed, which is not the check's
    # failure; where it ended, it must pass on the abort's status.
    if rc is None:
        log("note mpirun was killed: it was still waiting for the lost host's daemon")
    else:
        expect(rc == 3, f"mpirun's exit status 3 (got {rc})", out)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["healthy", "slow", "down", "down-midrun"])
    p.add_argument("--source", required=True, help="the source tree (its scripts/)")
    p.add_argument("--check", required=True, help="the overpass-check program")
    p.add_argument("--library", default="", help="liboverpass.so (netns-run preloads it)")
    p.add_argument("--no-overpass", action="store_true", help="run without Overpass preloaded")
    p.add_argument("--hosts", default="2,2", help="healthy: ranks per host, e.g. 2,2 or 2,1,2")
    p.add_argument("--start-delay", type=float, default=0, help="healthy: --start-delay")
    p.add_argument("--rig", default=os.environ.get("NETNS_RIG", "1"))
    p.add_argument("--job-timeout", type=float, default=90)
    a = p.parse_args()
    if os.geteuid() != 0 or subprocess.run(["unshare", "--net", "true"],
                                           capture_output=True).returncode != 0:
        print("SKIP: network namespaces cannot be made here (needs root)")
        return SKIP
    # A signal (ctest's timeout, ^C) still takes the rig down.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, f: sys.exit(f"stopped by signal {s}"))
    rig = Rig(a.source, a.rig)
    overpass = not a.no_overpass
    status = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if a.mode == "healthy":
                run_healthy(rig, a, overpass, a.hosts, tmp)
            elif a.mode == "slow":
                run_slow(rig, a, overpass, tmp)
            else:
                run_down(rig, a, overpass, a.mode == "down-midrun")
    except Failure as e:
        print(f"FAIL: {e}")
        status = 1
    finally:
        try:
            rig.down()
        except Failure as e:
            print(f"FAIL: {e}")
            status = 1
    if status == 0:
        print(f"PASS: overpass-check {a.mode}")
    return status


if __name__ == "__main__":
    sys.exit(main())
