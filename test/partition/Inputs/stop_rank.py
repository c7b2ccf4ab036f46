"""Starts a 2-rank data-parallel training run, stops rank 1 with SIGSTOP once both ranks are
stepping, and waits for the job to end: rank 0 must give up on its collective after
--collective-timeout (2 s) with an error. Prints the job's stderr and how long it took.

  stop_rank.py MPIRUN SHARDC PEF IDX TARGETS OUT_DIR
"""
import os
import shlex
import signal
import subprocess
import sys
import time

mpirun, shardc, pef, idx, targets, out = sys.argv[1:7]
# Steps enough to outlast the stop by far (a compiled step of this model takes well under a
# millisecond, so 20,000 steps could end before the stop); a missed stop still ends below,
# where the wait for the job is bounded and the job is killed.
cmd = shlex.split(mpirun) + ["-np", "2", shardc, "run", "--pef", pef, "--input", f"idx={idx}",
                             "--input", f"targets={targets}", "--steps", "1000000",
                             "--collective-timeout", "2", "--output-dir", out]
job = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)


def descendants(root):
    """Pids of every process below `root` (other tests' ranks run beside this one)."""
    parent = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{pid}/stat").read()
            parent[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    below, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - below
        below |= frontier
    return below


def rank_pid(rank):
    """The pid of this job's shardc process of `rank` (its environment names the rank)."""
    for pid in descendants(job.pid):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if exe.endswith("shardc") and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return pid
    return None


def end_job():
    """Kills whatever of the job is left: mpirun, its ranks, a stopped rank."""
    for pid in descendants(job.pid) | {job.pid}:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


try:
    deadline = time.time() + 60
    pid = None
    while pid is None and time.time() < deadline and job.poll() is None:
        time.sleep(0.2)
        pid = rank_pid(1)
    if pid is None:
        sys.exit("rank 1 never started")
    time.sleep(1.5)  # both ranks are stepping by now
    os.kill(pid, signal.SIGSTOP)
    start = time.time()
    try:
        _, err = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sys.exit("the job did not end within 60 s of the stop")
    sys.stderr.write(err)
    print(f"ended after {time.time() - start:.1f} s with exit {job.returncode}")
    sys.exit(0 if job.returncode != 0 else 1)
finally:
    end_job()
