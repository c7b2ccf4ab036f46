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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_job import end_job, rank_pid, signal_and_wait  # noqa: E402

mpirun, shardc, pef, idx, targets, out = sys.argv[1:7]
# Steps enough to outlast the stop by far (a compiled step of this model takes well under a
# millisecond, so 20,000 steps could end before the stop); a missed stop still ends below,
# where the wait for the job is bounded and the job is killed.
cmd = shlex.split(mpirun) + ["-np", "2", shardc, "run", "--pef", pef, "--input", f"idx={idx}",
                             "--input", f"targets={targets}", "--steps", "1000000",
                             "--collective-timeout", "2", "--output-dir", out]
job = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)


try:
    deadline = time.time() + 60
    pid = None
    while pid is None and time.time() < deadline and job.poll() is None:
        time.sleep(0.2)
        pid = rank_pid(job, 1)
    if pid is None:
        sys.exit("rank 1 never started")
    time.sleep(1.5)  # both ranks are stepping by now
    signal_and_wait(job, pid, signal.SIGSTOP, "stop")
    sys.exit(0 if job.returncode != 0 else 1)
finally:
    end_job(job)
