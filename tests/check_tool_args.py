#!/usr/bin/env python3
"""Every tool and script answers --help (exit 0, a usage text naming its options) and stops on a
bad argument with a message on stderr that names it, a non-zero exit status and no Python
traceback (issue 14). The scripts run with a PATH whose first directory holds stand-ins for
cmake, apt-get, sudo, dpkg-query, nvidia-smi, nvcc, mpirun and mpiexec that only leave a mark:
a script that would install, build, probe the GPU or launch MPI before handling its arguments
fails the test instead of doing it.

  check_tool_args.py --source DIR --build DIR --mpiexec MPIEXEC [--gpu-check PATH]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

STAND_INS = ["cmake", "apt-get", "sudo", "dpkg-query", "nvidia-smi", "nvcc", "mpirun", "mpiexec",
             "make", "ninja", "ip", "tc", "nsenter", "unshare", "ping", "setsid"]

failures = []


def run(cmd, env, timeout=60):
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"(killed after {timeout} s)", timeout
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def fail(cmd, why, out="", err=""):
    failures.append(cmd)
    print(f"FAIL {' '.join(cmd)}: {why}\n  stdout: {out[-600:]!r}\n  stderr: {err[-600:]!r}")


def check_help(cmd, mentions, env, marks):
    rc, out, err, _ = run(cmd, env)
    ran = take_marks(marks)
    missing = [m for m in mentions if m not in out]
    if ran:
        fail(cmd, f"ran {ran} before handling its arguments", out, err)
    elif rc != 0:
        fail(cmd, f"exit status {rc}, expected 0", out, err)
    elif missing:
        fail(cmd, f"the usage text does not mention {missing}", out, err)
    elif "Traceback" in out + err:
        fail(cmd, "a Python traceback", out, err)
    else:
        print(f"ok   {' '.join(cmd)}")


def check_bad(cmd, names, env, marks):
    """`names`: what stderr must contain (the bad argument, as given)."""
    rc, out, err, _ = run(cmd, env)
    ran = take_marks(marks)
    missing = [n for n in names if n not in err]
    if ran:
        fail(cmd, f"ran {ran} before handling its arguments", out, err)
    elif rc is None or rc == 0:
        fail(cmd, f"exit status {rc}, expected non-zero", out, err)
    elif "Traceback" in out + err:
        fail(cmd, "a Python traceback", out, err)
    elif missing:
        fail(cmd, f"stderr does not name {missing}", out, err)
    elif "usage" not in err.lower() and "--help" not in err:
        fail(cmd, "stderr has no usage line nor --help hint", out, err)
    else:
        said = [line for line in err.splitlines() if names[0] in line]
        print(f"ok   {' '.join(cmd)}  ->  {said[0].strip()}")


def take_marks(marks):
    """The stand-ins that ran (something was installed, built, probed or launched), cleared."""
    ran = sorted(os.listdir(marks))
    for name in ran:
        os.unlink(os.path.join(marks, name))
    return ran


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--gpu-check", default="")
    a = p.parse_args()
    tools = os.path.join(a.build, "tools")
    info = os.path.join(tools, "overpass-info")
    membw = os.path.join(tools, "overpass-membw")
    bench = os.path.join(tools, "overpass-bench")
    scripts = os.path.join(a.source, "scripts")

    with tempfile.TemporaryDirectory() as tmp:
        fake, marks = os.path.join(tmp, "bin"), os.path.join(tmp, "marks")
        os.mkdir(fake)
        os.mkdir(marks)
        for name in STAND_INS:
            path = os.path.join(fake, name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ntouch '{marks}/{name}'\nexit 97\n")
            os.chmod(path, 0o755)
        # A rank that exits non-zero makes mpiexec wait out odls_base_sigkill_timeout (1 s) while
        # it ends the job: 2.4 s for each bad argument of the MPI tools, 65 s of this test, for
        # nothing here (one rank, already gone); 0.1 s with it at 0.
        env = dict(os.environ, OVERPASS_BUILD_DIR=a.build, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_odls_base_sigkill_timeout="0")
        for k in [k for k in env if k.startswith("OVERPASS_") and k != "OVERPASS_BUILD_DIR"]:
            del env[k]
        sandbox = dict(env, PATH=fake + os.pathsep + env["PATH"])

        # overpass-info
        info_opts = ["--markdown", "--topology", "--algorithms", "--selection", "one-node",
                     "spread", "65536"]
        for h in ["--help", "-h"]:
            check_help([info, h], info_opts, env, marks)
        for bad, name in [("0", "'0'"), ("-1", "'-1'"), ("abc", "'abc'"), ("4x", "'4x'"),
                          ("65537", "'65537'"), ("99999999999", "'99999999999'")]:
            check_bad([info, "--selection", bad], [name, "--selection"], env, marks)
        check_bad([info, "--selection", "4", "bogus"], ["'bogus'"], env, marks)
        check_bad([info, "--selection", "4", "spread", "x"], ["'x'"], env, marks)
        check_bad([info, "--selection"], ["--selection", "NP"], env, marks)
        check_bad([info, "--bogus"], ["'--bogus'"], env, marks)
        check_bad([info, "bogus"], ["'bogus'"], env, marks)
        check_bad([info, "--markdown", "x"], ["'x'"], env, marks)
        for layout in ["one-node", "spread"]:
            cmd = [info, "--selection", "65536", layout]
            rc, out, err, seconds = run(cmd, env, timeout=30)
            if rc != 0 or "allreduce" not in out or seconds > 10:
                fail(cmd, f"exit status {rc} after {seconds:.1f} s (expected 0, quickly)", out,
                     err)
            else:
                print(f"ok   {' '.join(cmd)} in {seconds:.2f} s")
        # Spread over 2 nodes, 2 ranks too: no node-local algorithm, no rule for one node.
        for np_ in ["2", "3", "4"]:
            cmd = [info, "--selection", np_, "spread"]
            rc, out, err, _ = run(cmd, env)
            rows = [line.split() for line in out.splitlines() if not line.startswith("#")]
            local = [r for r in rows if len(r) > 2 and (r[2] in ("shm", "cma") or
                                                          "nodes=1" in " ".join(r[3:]))]
            if rc != 0 or "spread over 2 nodes" not in out or not rows or local:
                fail(cmd, f"exit status {rc}; node-local choices {local}", out, err)
            else:
                print(f"ok   {' '.join(cmd)}: {len(rows)} ranges, none node-local")
        rc, out, err, _ = run([info, "--algorithms"], env)
        rows = [line.split() for line in out.splitlines()]
        if rc != 0 or ["allreduce", "ring"] not in rows or any(len(r) != 2 for r in rows):
            fail([info, "--algorithms"], "not one 'COLLECTIVE NAME' line per algorithm", out, err)
        else:
            print(f"ok   {info} --algorithms ({len(rows)} algorithms)")

        # overpass-membw
        for h in ["--help", "-h"]:
            check_help([membw, h], ["-t THREADS", "-m MIB", "-x KIB", "-l"], env, marks)
        if len(os.sched_getaffinity(0)) >= 2:  # -l: one line's round trip between two cpus, in ns
            r = subprocess.run([membw, "-l"], capture_output=True, text=True, env=env)
            try:
                ok = r.returncode == 0 and 0 < float(r.stdout) < 1e6
            except ValueError:
                ok = False
            if ok:
                print(f"ok   {membw} -l ({r.stdout.strip()} ns)")
            else:
                fail([membw, "-l"], "no round trip in ns", r.stdout, r.stderr)
        for args, name in [(["-t", "0"], "'0'"), (["-t", "2x"], "'2x'"), (["-m", "4"], "'4'"),
                           (["-x", "abc"], "'abc'"), (["-t"], "-t"), (["--bogus"], "'--bogus'"),
                           (["x"], "'x'")]:
            check_bad([membw] + args, [name], env, marks)

        # overpass-gpu-check (built where the CUDA toolkit is found)
        if a.gpu_check:
            check_help([a.gpu_check, "--help"], ["--ranks", "--max-bytes", "--sim"], env, marks)
            for args, name in [(["--ranks", "1"], "'1'"), (["--ranks", "4x"], "'4x'"),
                               (["--max-bytes", "abc"], "'abc'"), (["--ranks"], "--ranks"),
                               (["--bogus"], "'--bogus'")]:
                check_bad([a.gpu_check] + args, [name], env, marks)

        # overpass-bench (an MPI program: one rank)
        mpi = [a.mpiexec, "--oversubscribe", "-np", "1", bench]
        check_help(mpi + ["--help"], ["--minbytes", "--maxbytes", "--stepfactor", "--coll",
                                      "allgatherv", "exscan", "--counts", "half-zero",
                                      "--nonblocking", "--overlap", "--test-during-compute",
                                      "--burst", "--sync-each", "--fresh"], env, marks)
        for args, name in [(["-b", "abc"], "'abc'"), (["-e", "0"], "--maxbytes 0"),
                           (["-f", "1"], "--stepfactor"), (["--coll", "foo"], "'foo'"),
                           (["--coll", "scan,gatherv,foo"], "'scan,gatherv,foo'"),
                           (["--counts", "lopsided"], "lopsided"), (["--counts"], "--counts"),
                           (["--bogus"], "--bogus"), (["--netdev", "nosuch0"], "nosuch0"),
                           (["--nonblocking", "3"], "--nonblocking"), (["--burst", "0"], "--burst"),
                           (["--test-during-compute", "2"], "--test-during-compute"),
                           (["--overlap", "--burst", "4"], "--burst"),
                           (["--nonblocking", "--overlap"], "--overlap"),
                           (["--sync-each", "--overlap"], "--sync-each"),
                           (["--fresh"], "--sync-each"),
                           (["--sync-each", "--fresh", "--cold"], "--cold"),
                           (["--sync-each", "--fresh", "--memory", "sim"], "--memory sim"),
                           (["--burst", "256"], "--burst 256 x --maxbytes 32M")]:
            check_bad(mpi + args, [name], env, marks)

        # overpass-bench-p2p (an MPI program of 2 ranks; its arguments are handled at 1)
        mpi = [a.mpiexec, "--oversubscribe", "-np", "1", os.path.join(tools, "overpass-bench-p2p")]
        check_help(mpi + ["--help"], ["-n CALLS", "-r REPS", "pingpong", "test-done",
                                      "test-pending"], env, marks)
        for args, name in [(["-n", "0"], "'0'"), (["-r", "x"], "'x'"), (["-n"], "-n"),
                           (["--bogus"], "'--bogus'")]:
            check_bad(mpi + args, [name], env, marks)

        # overpass-check (an MPI program: one rank)
        mpi = [a.mpiexec, "--oversubscribe", "-np", "1", os.path.join(tools, "overpass-check")]
        check_help(mpi + ["--help"], ["--timeout", "--pair-timeout", "--slow-factor",
                                      "--latency-factor", "--min-bandwidth", "--size", "--reps",
                                      "--schedule", "--start-delay", "--json", "Exit status"],
                   env, marks)
        for args, names in [(["--timeout", "abc"], ["--timeout", "abc"]),
                            (["--timeout", "0"], ["--timeout", "0"]),
                            (["--pair-timeout", "-1"], ["--pair-timeout", "-1"]),
                            (["--slow-factor", "2"], ["--slow-factor", "2"]),
                            (["--size", "4x"], ["--size", "'4x'"]),
                            (["--size", "0"], ["--size 0"]),
                            (["--schedule", "bogus"], ["--schedule", "bogus"]),
                            (["--timeout", "5"], ["--timeout 5", "--pair-timeout"]),
                            (["--bogus"], ["--bogus"]), (["extra"], ["extra"])]:
            check_bad(mpi + args, names, env, marks)

        # scripts
        run_ = os.path.join(scripts, "overpass-run")
        for h in ["--help", "-h"]:
            check_help([run_, h], ["mpirun", "LD_PRELOAD", "OVERPASS_", "OVERPASS_LIBRARY", "--"],
                       sandbox, marks)
        check_bad([run_], ["no command"], sandbox, marks)
        check_bad([run_, "-np", "4", "./app"], ["'-np'"], sandbox, marks)
        check_bad([run_, "no-such-command-xyz"], ["'no-such-command-xyz'"], sandbox, marks)

        compare = os.path.join(scripts, "compare")
        rc, out, err, _ = run([compare, "--help"], sandbox)
        configs = [line.split()[0] for line in out.split("configurations (")[-1].splitlines()[2:]
                   if line.startswith("  ") and not line.startswith("   ")]
        for h in ["--help", "-h"]:
            check_help([compare, h], ["--np", "--coll", "--minbytes", "--maxbytes",
                                      "--stepfactor", "--iters", "--warmup", "--reps",
                                      "--counts", "half-zero", "alltoallv",
                                      "--configs", "--no-build", "@ALGORITHM", "ompi",
                                      "overpass-off", "--hosts", "--ranks-per-host",
                                      "--placement", "--rate", "--burst", "--rig",
                                      "--nonblocking", "--overlap", "--test-during-compute",
                                      "--bench-burst"], sandbox,
                       marks)
        if "ompi" not in configs or "overpass" not in configs or "@ALGORITHM" not in configs:
            fail([compare, "--help"], f"does not list the configurations: {configs}", out, err)
        for args, names in [(["-b", "abc"], ["--minbytes", "'abc'"]),
                            (["-e", "0"], ["--maxbytes", "0"]),
                            (["-f", "1"], ["--stepfactor", "'1'"]),
                            (["-n", "0"], ["--iters", "'0'"]),
                            (["--np", "0"], ["--np", "'0'"]), (["--np", "2,x"], ["'2,x'"]),
                            (["--reps", "0"], ["--reps", "'0'"]),
                            (["--reps", "x"], ["--reps", "'x'"]),
                            (["--coll", "foo"], ["'foo'"]),
                            (["--counts", "lopsided"], ["--counts", "'lopsided'"]),
                            (["--counts", "skewed", "--coll", "allreduce,scan"],
                             ["--counts", "'skewed'", "allreduce,scan"]),
                            (["--configs", "ompi,bogus"], ["'bogus'", "overpass-off"]),
                            (["--configs", "ompi,@nosuch"], ["'nosuch'", "allreduce", "@ring"]),
                            (["--coll", "bcast", "--configs", "ompi,@ring"], ["'ring'", "bcast"]),
                            (["--configs", "@ring", "--coll", "all"], ["'@ring'", "--coll"]),
                            (["--configs", "@ring/tcp"], ["'@ring/tcp'"]),
                            (["--hosts", "1"], ["--hosts", "2 or more"]),
                            (["--hosts", "x"], ["--hosts", "'x'"]),
                            (["--hosts", "2", "--placement", "diag"], ["--placement", "'diag'"]),
                            (["--hosts", "2", "--rate", "fast"], ["--rate", "'fast'"]),
                            (["--hosts", "2", "--burst", "1q"], ["--burst", "'1q'"]),
                            (["--placement", "rr"], ["--placement", "--hosts"]),
                            (["--nonblocking", "3"], ["--nonblocking", "'3'"]),
                            (["--inplace", "3"], ["--inplace", "'3'"]),
                            (["--test-during-compute", "2"], ["--test-during-compute",
                                                              "--overlap"]),
                            (["--overlap", "--bench-burst", "4"], ["--overlap", "--bench-burst"]),
                            (["--bench-burst", "x"], ["--bench-burst", "'x'"]),
                            (["--fresh"], ["--fresh", "--sync-each"]),
                            (["--bench-burst", "256"], ["--bench-burst", "1 GiB"]),
                            (["bogus"], ["bogus"])]:
            check_bad([compare] + args, names, sandbox, marks)

        demo = os.path.join(scripts, "demo")
        check_help([demo, "--help"], ["scripts/compare", "--configs", "@ALGORITHM"], sandbox,
                   marks)
        check_bad([demo, "--configs", "bogus"], ["'bogus'"], sandbox, marks)
        check_bad([demo, "--reps", "0"], ["--reps", "'0'"], sandbox, marks)

        test = os.path.join(scripts, "test")
        check_help([test, "--help"], ["ctest", "-L", "-R", "install-deps"], sandbox, marks)
        check_bad([test, "--bogus"], ["'--bogus'", "ctest"], sandbox, marks)
        check_bad([test, "-L", "mpi", "-X"], ["'-X'"], sandbox, marks)

        build = os.path.join(scripts, "build")
        check_help([build, "--help"], ["cmake", "OVERPASS_BUILD_DIR", "-D"], sandbox, marks)

        gpu = os.path.join(scripts, "gpu-check")
        check_help([gpu, "--help"], ["BUILD_DIRECTORY", "nvidia-smi"], sandbox, marks)
        check_bad([gpu, "-x"], ["'-x'"], sandbox, marks)
        check_bad([gpu, "a", "b"], ["'b'"], sandbox, marks)

        # the rig of several hosts (nothing may be created or launched on a bad argument)
        cluster = os.path.join(scripts, "netns-cluster")
        for h in ["--help", "-h"]:
            check_help([cluster, h], ["up N", "--rate", "--ranks-per-host", "down", "status",
                                      "check", "NETNS_RIG", "netem", "198.18"], sandbox, marks)
        for args, names in [([], ["no command"]), (["bogus"], ["'bogus'"]),
                            (["up"], ["number of hosts"]), (["up", "0"], ["'0'"]),
                            (["up", "65"], ["'65'"]), (["up", "2", "--rate", "fast"], ["'fast'"]),
                            (["up", "2", "--rate"], ["--rate"]),
                            (["up", "2", "--ranks-per-host", "2,x"], ["'2,x'"]),
                            (["up", "3", "--ranks-per-host", "2,1"], ["2 hosts, not 3"]),
                            (["up", "2", "--bogus"], ["'--bogus'"]),
                            (["down", "x"], ["down takes no arguments"])]:
            check_bad([cluster] + args, names, sandbox, marks)
        netrun = os.path.join(scripts, "netns-run")
        for h in ["--help", "-h"]:
            check_help([netrun, h], ["--no-overpass", "-np", "OVERPASS_", "netns-agent",
                                     "mpi_yield_when_idle"], sandbox, marks)
        check_bad([netrun], ["nothing to run"], sandbox, marks)
        agent = os.path.join(scripts, "netns-agent")
        check_help([agent, "--help"], ["HOST COMMAND", "plm_rsh_agent"], sandbox, marks)
        check_bad([agent], ["HOST"], sandbox, marks)
        check_bad([agent, "-z", "host0", "true"], ["'-z'"], sandbox, marks)
        check_bad([agent, "elsewhere", "true"], ["'elsewhere'"], sandbox, marks)

        tables = os.path.join(scripts, "perf-tables")
        for h in ["--help", "-h"]:
            check_help([tables, h], ["--check", "--doc", "--manifest", "perf-tables:begin",
                                     "docs/perf/data"], sandbox, marks)
        check_bad([tables, "--bogus"], ["--bogus"], sandbox, marks)
        check_bad([tables, "extra"], ["extra"], sandbox, marks)
        check_bad([tables, "--doc"], ["--doc"], sandbox, marks)
        check_bad([tables, "--check", "--doc", "no-such-page.md"], ["no-such-page.md"], sandbox,
                  marks)

        deps = os.path.join(scripts, "install-deps")
        check_help([deps, "--help"], ["apt-get", "dpkg-query"], sandbox, marks)
        check_bad([deps, "x"], ["'x'"], sandbox, marks)

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("every tool and script answers --help and names a bad argument")
    return 0


if __name__ == "__main__":
    sys.exit(main())
