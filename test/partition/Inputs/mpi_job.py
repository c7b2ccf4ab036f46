"""Finding and ending the processes of an mpirun job (stop_rank.py, kill_rank.py)."""
import os
import signal


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
