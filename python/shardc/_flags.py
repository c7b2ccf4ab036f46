"""Python keyword arguments as shardc's command-line flags."""

# Python names whose flag is not the name with '-' for '_'.
_SPELLED = {"batch_size": "-b", "hypersections": "--enable-hypersection",
            "lr": "--learning-rate"}


def to_flags(options):
    """{name: value} -> flags: None and False are left out, True is the flag alone, a list
    gives its values after the flag, opt_level N is -oN, data_parallel N is
    --data-parallel -ws N, a mesh dict is AXIS=N,..."""
    flags = []
    for name, value in options.items():
        if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
            value = value.item()  # numpy and torch scalars
        if value is None or value is False or (isinstance(value, (list, tuple)) and not value):
            continue
        if name == "opt_level":
            if value not in (0, 1, 3):
                raise ValueError(f"opt_level must be 0, 1 or 3, got {value!r}")
            flags.append(f"-o{value}")
            continue
        if name == "data_parallel":
            flags += ["--data-parallel", "-ws", str(int(value))]
            continue
        if name == "mesh" and isinstance(value, dict):
            value = ",".join(f"{axis}={n}" for axis, n in value.items())
        flag = _SPELLED.get(name, "--" + name.replace("_", "-"))
        if value is True:
            flags.append(flag)
        elif isinstance(value, (list, tuple)):
            flags += [flag] + [str(v) for v in value]
        else:
            flags += [flag, str(value)]
    return flags
