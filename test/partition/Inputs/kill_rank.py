"""Starts a 2-rank training run that writes checkpoints into CKDIR, kills rank 1 with SIGKILL
once the first checkpoint is there, and waits for the job to end: it must end with an error
within 30 s. Prints the job's stderr, how long it took, and the checkpoints left.

  kill_rank.py MPIRUN SHARDC CKDIR RUN_ARGS...
"""
import os
import shlex
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_job import end_job, rank_pid, signal_and_wait  # noqa: E402

mpirun, shardc, ckdir = sys.argv[1:4]
cmd = shlex.split(mpirun) + ["-np", "2", shardc, "run"] + sys.argv[4:]
job = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)


def checkpoints():
    try:
        return sorted(n for n in os.listdir(ckdir) if n.startswith("step-"))
    except FileNotFoundError:
        return []


try:
    deadline = time.time() + 120
    while not checkpoints() and time.time() < deadline and job.poll() is None:
        time.sleep(0.1)
    pid = rank_pid(job, 1)
    if not checkpoints() or pid is None:
        sys.exit("the run wrote no checkpoint or rank 1 is gone (did it end early?)")
    took = signal_and_wait(job, pid, signal.SIGKILL, "kill")
    print("checkpoints left:", " ".join(checkpoints()))
    sys.exit(0 if job.returncode != 0 and took < 30 else 1)
finally:
    end_job(job)
