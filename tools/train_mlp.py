#!/usr/bin/env python3
"""A small data-parallel training loop: the real workload scripts/demo runs beside overpass-bench.

A multi-layer perceptron (ReLU, softmax cross-entropy) learns a synthetic classification task
(labels from a fixed random "teacher" network, fixed seed). Every rank starts from the same
weights, trains on its own shard of the data, and after computing each layer's gradients (last
layer first, as data-parallel frameworks do) averages them over the ranks with one
MPI_Allreduce per layer, then takes a plain SGD step. An unmodified mpi4py + numpy program:
run it with and without liboverpass.so preloaded and compare.

  mpirun -np 4 python3 tools/train_mlp.py --steps 200
  mpirun -np 4 -x LD_PRELOAD=build/shim/liboverpass.so python3 tools/train_mlp.py --json t.json

Prints the time per step (median over the timed steps of the slowest rank's time: a data-parallel
step lasts as long as its slowest rank), the time in MPI_Allreduce per step, and the loss curve
(mean over ranks of each rank's minibatch loss). --json writes the same with every step's loss.
"""
import argparse
import json
import os
import sys
import time

# One BLAS thread per rank: the ranks already share the cores.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--layers", default="256,512,512,512,16",
                   help="widths: input, hidden layers..., classes (comma-separated)")
    p.add_argument("--batch", type=int, default=16, help="samples per rank and step")
    p.add_argument("--shard", type=int, default=4096, help="samples per rank")
    p.add_argument("--steps", type=int, default=200, help="timed SGD steps")
    p.add_argument("--warmup", type=int, default=5, help="SGD steps before the timed ones")
    p.add_argument("--lr", type=float, default=0.05, help="learning rate")
    p.add_argument("--seed", type=int, default=14)
    p.add_argument("--json", help="write the results to this file (rank 0)")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    a = p.parse_args()
    try:
        a.widths = [int(x) for x in a.layers.split(",")]
    except ValueError:
        p.error(f"--layers: expected comma-separated integers, got '{a.layers}'")
    if len(a.widths) < 2 or min(a.widths) < 1:
        p.error("--layers: at least an input and an output width, each >= 1")
    for name in ("batch", "shard", "steps"):
        if getattr(a, name) < 1:
            p.error(f"--{name} must be >= 1")
    if a.warmup < 0:
        p.error("--warmup must be >= 0")
    return a


class Mlp:
    """Weights and the gradient buffers, one flat float32 buffer per layer (weights then bias),
    so that each layer's gradients travel in one allreduce without a copy."""

    def __init__(self, widths, rng):
        self.weights, self.biases, self.grads, self.grad_w, self.grad_b = [], [], [], [], []
        for fan_in, fan_out in zip(widths[:-1], widths[1:]):
            w = rng.standard_normal((fan_in, fan_out)).astype(np.float32)
            self.weights.append(w * np.float32(np.sqrt(2.0 / fan_in)))
            self.biases.append(np.zeros(fan_out, dtype=np.float32))
            g = np.empty(fan_in * fan_out + fan_out, dtype=np.float32)
            self.grads.append(g)
            self.grad_w.append(g[:fan_in * fan_out].reshape(fan_in, fan_out))
            self.grad_b.append(g[fan_in * fan_out:])

    def step(self, x, labels, comm, lr):
        """One SGD step on this rank's minibatch; returns (local loss, seconds in allreduce)."""
        acts = [x]
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            z = acts[-1] @ w + b
            acts.append(np.maximum(z, 0, out=z) if i < len(self.weights) - 1 else z)
        logits = acts[-1]
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        n = x.shape[0]
        loss = float(-np.log(probs[np.arange(n), labels] + 1e-12).mean())

        delta = probs
        delta[np.arange(n), labels] -= 1
        delta /= n
        size = comm.Get_size()
        in_allreduce = 0.0
        for i in reversed(range(len(self.weights))):
            np.matmul(acts[i].T, delta, out=self.grad_w[i])
            np.sum(delta, axis=0, out=self.grad_b[i])
            if i > 0:
                delta = (delta @ self.weights[i].T) * (acts[i] > 0)
            start = time.perf_counter()
            comm.Allreduce(MPI.IN_PLACE, self.grads[i], op=MPI.SUM)
            in_allreduce += time.perf_counter() - start
            self.grads[i] *= np.float32(lr / size)
            self.weights[i] -= self.grad_w[i]
            self.biases[i] -= self.grad_b[i]
        return loss, in_allreduce

    def checksum(self):
        return float(sum(np.float64(w.sum()) + np.float64(b.sum())
                         for w, b in zip(self.weights, self.biases)))


def make_shard(widths, shard, seed, rank):
    """This rank's samples; labels from a teacher network that is the same on every rank."""
    teacher_rng = np.random.default_rng(seed)
    hidden = max(widths[1], 16)
    t1 = teacher_rng.standard_normal((widths[0], hidden)).astype(np.float32)
    t2 = teacher_rng.standard_normal((hidden, widths[-1])).astype(np.float32)
    rng = np.random.default_rng([seed, rank + 1])
    x = rng.standard_normal((shard, widths[0])).astype(np.float32)
    labels = np.argmax(np.tanh(x @ t1 / np.sqrt(widths[0])) @ t2, axis=1)
    return x, labels


def main():
    a = parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    x, labels = make_shard(a.widths, a.shard, a.seed, rank)
    model = Mlp(a.widths, np.random.default_rng([a.seed, 0]))
    order = np.random.default_rng([a.seed, rank + 1, 7]).permutation(a.shard)

    total = a.warmup + a.steps
    step_s = np.zeros(total)
    allreduce_s = np.zeros(total)
    losses = np.zeros(total)
    cursor = 0
    comm.Barrier()
    for step in range(total):
        if cursor + a.batch > a.shard:
            cursor = 0
        idx = order[cursor:cursor + a.batch]
        cursor += a.batch
        start = time.perf_counter()
        losses[step], allreduce_s[step] = model.step(x[idx], labels[idx], comm, a.lr)
        step_s[step] = time.perf_counter() - start

    # Bookkeeping after the timed loop: the slowest rank per step, the mean loss over ranks.
    slowest = np.zeros(total) if rank == 0 else None
    slowest_ar = np.zeros(total) if rank == 0 else None
    loss_sum = np.zeros(total) if rank == 0 else None
    comm.Reduce(step_s, slowest, op=MPI.MAX, root=0)
    comm.Reduce(allreduce_s, slowest_ar, op=MPI.MAX, root=0)
    comm.Reduce(losses, loss_sum, op=MPI.SUM, root=0)
    checksums = comm.gather(model.checksum(), root=0)
    if rank != 0:
        return 0

    timed = slowest[a.warmup:]
    curve = (loss_sum / size).tolist()
    grad_bytes = sum(g.nbytes for g in model.grads)
    result = {
        "np": size,
        "layers": a.widths,
        "batch_per_rank": a.batch,
        "steps": a.steps,
        "warmup": a.warmup,
        "lr": a.lr,
        "seed": a.seed,
        "allreduce_calls_per_step": len(model.grads),
        "allreduce_bytes_per_step": grad_bytes,
        "step_ms_median": float(np.median(timed)) * 1e3,
        "step_ms_q1": float(np.percentile(timed, 25)) * 1e3,
        "step_ms_q3": float(np.percentile(timed, 75)) * 1e3,
        "allreduce_ms_median": float(np.median(slowest_ar[a.warmup:])) * 1e3,
        "loss": curve,
        "ranks_agree": len(set(checksums)) == 1,
        "checksums": checksums,
    }
    print(f"train_mlp: np {size}, layers {a.layers}, {a.batch} samples per rank and step, "
          f"{len(model.grads)} allreduces per step ({grad_bytes / 2**20:.2f} MiB); "
          f"time per step {result['step_ms_median']:.2f} ms (median of {a.steps} steps, slowest "
          f"rank; quartiles {result['step_ms_q1']:.2f}-{result['step_ms_q3']:.2f}), in allreduce "
          f"{result['allreduce_ms_median']:.2f} ms; loss {curve[0]:.4f} -> {curve[-1]:.4f}; "
          f"weights {'equal' if result['ranks_agree'] else 'DIFFER'} on every rank")
    if not a.quiet:
        every = max(1, total // 10)
        print("train_mlp: loss " + ", ".join(f"{s}: {curve[s]:.4f}"
                                             for s in list(range(0, total, every)) + [total - 1]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f)
    return 0 if result["ranks_agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
