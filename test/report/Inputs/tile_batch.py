"""Repeats a fixture's batch along the leading axis: tile_batch.py IN.npy OUT.npy TIMES."""
import sys

import numpy as np

np.save(sys.argv[2], np.tile(np.load(sys.argv[1]), (int(sys.argv[3]), 1)))
