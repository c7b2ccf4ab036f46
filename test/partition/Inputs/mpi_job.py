"""Finding and ending the processes of an mpirun job (stop_rank.py, kill_rank.py)."""
import os
import signal
import subprocess
import sys
import time


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


def rank_pid(job, rank):
    """The pid of `job`'s shardc process of `rank` (its environment names the rank)."""
    for pid in descendants(job.pid):
        try:
            env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if exe.endswith("shardc") and f"OMPI_COMM_WORLD_RANK={rank}".encode() in env:
            return pid
    return None


def end_job(job):
    """Kills whatever of `job` is left: mpirun, its ranks, a stopped rank."""
    for pid in descendants(job.pid) | {job.pid}:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def signal_and_wait(job, pid, sig, what):
    """Sends `sig` to `pid` and waits up to 60 s for `job` to end; copies its stderr, prints
    how long it took and returns the seconds."""
    os.kill(pid, sig)
    start = time.time()
    try:
        _, err = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        sys.exit(f"the job did not end within 60 s of the {what}")
    took = time.time() - start
    sys.stderr.write(err)
    print(f"ended after {took:.1f} s with exit {job.returncode}")
    return took
