#!/usr/bin/env python3
"""Wall time of commands run in turn, N rounds: A, B, A, B, ...

    interleave.py N [--fresh PATH] [--cpu] -- CMD_A... -- CMD_B...

Each round runs every command once, one after the other (every other round
in reverse order, so that running second is no one's bias), so a machine that
speeds up or slows down (a shared VM does, by tens of percent within minutes)
moves every command's figures alike, and the ratios stay fair. --fresh PATH
deletes PATH (a directory) before every run of every command but the first
(the baseline). Prints one line per command: min and median seconds, the
ratios of both to the first command's, and the median of the per-round
ratios (each round's run against the baseline's run of the same round: the
pairing cancels most of the drift). A command that fails stops the
measurement: a failed run is no figure. --cpu measures CPU seconds
instead (user + system of the command and every process it waited for, as
the kernel accounts them), the same way.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def main(argv):
    n = int(argv[0])
    rest = argv[1:]
    fresh, cpu = None, False
    while rest[0] != "--":
        if rest[0] == "--fresh":
            fresh, rest = rest[1], rest[2:]
        elif rest[0] == "--cpu":
            cpu, rest = True, rest[1:]
        else:
            sys.exit(f"interleave.py: unknown option {rest[0]}")
    cmds, cur = [], None
    for a in rest:
        if a == "--":
            cur = []
            cmds.append(cur)
        else:
            cur.append(a)
    walls = [[] for _ in cmds]
    for r in range(n):
        # Every other round runs the commands in reverse (A B, B A, ...): a
        # fixed order gives the one that runs second a few percent of bias
        # of its own (caches, the page cache, the CPU's frequency), measured
        # at 4-14% between two copies of one binary.
        order = range(len(cmds)) if r % 2 == 0 else reversed(range(len(cmds)))
        for i in order:
            cmd = cmds[i]
            if fresh and i > 0:
                shutil.rmtree(fresh, ignore_errors=True)
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            stderr = proc.stderr.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.perf_counter() - t0
            walls[i].append(usage.ru_utime + usage.ru_stime if cpu else wall)
            if proc.returncode != 0:
                sys.stderr.write(stderr.decode(errors="replace"))
                sys.exit(f"interleave.py: {' '.join(cmd)} exited with status {proc.returncode}")
    base_min, base_med = min(walls[0]), statistics.median(walls[0])
    for w in walls:
        lo, med = min(w), statistics.median(w)
        paired = statistics.median(x / b for x, b in zip(w, walls[0]))
        print(f"{lo:.3f} {med:.3f} {lo / base_min:.2f}x {med / base_med:.2f}x {paired:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
