"""Reads a compile log of --auto-partition and checks the search against the baselines and,
when the enumeration ran, against the optimum: exit 1 with the figures when it falls short."""
import re
import sys

text = open(sys.argv[1]).read()
ms = lambda line: float(re.search(r"([0-9.]+) ms", line).group(1))
baselines = {m.group(1): ms(m.group(0))
             for m in re.finditer(r"baseline (\S+): [0-9.]+ ms, [0-9.]+ MB per device\n", text)}
search = ms(re.search(r"search: .* best .*", text).group(0))
best = min(baselines.values())
print(f"search {search:.4f} ms, best baseline {best:.4f} ms")
ok = search <= best * (1 + 1e-9)
optimum = re.search(r"exhaustive optimum: .*", text)
if optimum:
    opt = ms(optimum.group(0))
    print(f"exhaustive optimum {opt:.4f} ms")
    ok = ok and search <= opt * 1.01
print("ok" if ok else "FAIL")
sys.exit(0 if ok else 1)
