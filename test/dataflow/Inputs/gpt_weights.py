"""Weights of a scripts/gen_gpt.py model as one .npz.

  gpt_weights.py DIR OUT.npz          every parameter's .npy in DIR
  gpt_weights.py --stack IN.npz OUT.npz
                                      per-layer arrays h<i>.<name> stacked into h.<name>, as
                                      a gen_gpt.py --scan model holds them
"""
import os
import re
import sys

import numpy as np

if sys.argv[1] == "--stack":
    src = np.load(sys.argv[2])
    out, layers = {}, {}
    for k in src.files:
        m = re.fullmatch(r"h(\d+)\.(.+)", k)
        if m:
            layers.setdefault(m.group(2), {})[int(m.group(1))] = src[k]
        else:
            out[k] = src[k]
    for name, per in layers.items():
        out["h." + name] = np.stack([per[i] for i in range(len(per))])
    np.savez(sys.argv[3], **out)
else:
    d = sys.argv[1]
    np.savez(sys.argv[2], **{f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))
                             if f.endswith(".npy") and f not in ("ids.npy", "expected_logits.npy")})
