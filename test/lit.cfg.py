# lit configuration for shardc's text-IR tests.
import os
import shutil

import lit.formats

config.name = "shardc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".ir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.shardc_obj_root, "test")
# test/.lit_test_times.txt holds each test's seconds in a release run: a fresh build folder has
# no times of its own, and lit then reads these to start the slowest tests first, so that the
# workers finish together (refresh it from build/test/.lit_test_times.txt).

config.environment["PATH"] = os.pathsep.join(
    [config.shardc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%shardc-bin", os.path.join(config.shardc_tools_dir, "shardc")))
config.substitutions.append(("%shardc ", os.path.join(config.shardc_tools_dir, "shardc") + " "))
config.substitutions.append(("%shardc-opt", os.path.join(config.shardc_tools_dir, "shardc-opt")))
config.substitutions.append(("%python", config.python_executable))

# The sanitized build (ASan + UBSan, several times slower) skips the largest zoo models; one
# model per family still runs under it, and all of them in the release build.
# The zoo's reference runs (the interpreter, minutes per model under the sanitizers) happen in
# the release build only.
if getattr(config, "shardc_sanitize", "OFF").upper() in ("ON", "TRUE", "1"):
    config.available_features.add("sanitize")
    config.substitutions.append(("%zoo-reference", "--no-reference"))
else:
    config.substitutions.append(("%zoo-reference", ""))

# MPI tests (REQUIRES: mpi) need mpirun; as root it refuses to start without the first flag.
mpirun = shutil.which("mpirun")
if mpirun:
    config.available_features.add("mpi")
    # OpenMPI's plugins leave allocations behind at exit (in modules unloaded by then, so
    # LeakSanitizer cannot name them); leaks are checked on the in-process runs instead.
    config.substitutions.append(
        ("%mpirun", mpirun + " --allow-run-as-root --oversubscribe -x ASAN_OPTIONS=detect_leaks=0"))
# The GEMM library choices runs time and cache (GemmChoice.h) go to the build tree, not to the
# user's cache folder.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.test_exec_root, "cache")
