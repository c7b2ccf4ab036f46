// shardc._shardc: the library under the `shardc` Python package (python/shardc/). Commands
// take the command line's arguments, parsed by the command line's own parser, so that Python
// and the shell accept the same flags; arrays cross as numpy arrays.
#include "shardc/Version.h"
#include "shardc/collectives/MpiCollectives.h"
#include "shardc/driver/CommandLine.h"
#include "shardc/driver/Driver.h"
#include "shardc/driver/RunArrays.h"
#include "shardc/ir/IR.h"
#include "shardc/pef/Pef.h"
#include "shardc/support/Error.h"
#include "shardc/support/Interrupt.h"

#include <algorithm>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

namespace py = pybind11;
using namespace shardc;

namespace {

py::dtype numpyDType(DType t) {
  switch (t) {
  case DType::F32:
    return py::dtype::of<float>();
  case DType::F64:
    return py::dtype::of<double>();
  case DType::F16:
    return py::dtype("float16");
  case DType::BF16:
    return py::dtype::of<uint16_t>(); // numpy has no bfloat16: the raw bits
  case DType::I64:
    return py::dtype::of<int64_t>();
  case DType::I32:
    return py::dtype::of<int32_t>();
  case DType::I1:
    return py::dtype::of<bool>();
  }
  throw InternalError("unknown dtype");
}

// The shardc type of a numpy array; `what` names it in errors.
TensorType typeOf(const py::array& a, const std::string& what) {
  static const std::pair<const char*, DType> kinds[] = {
      {"float32", DType::F32}, {"float64", DType::F64}, {"float16", DType::F16},
      {"int64", DType::I64},   {"int32", DType::I32},   {"bool", DType::I1},
      {"uint16", DType::BF16}}; // numpy has no bfloat16: its bits, as they come out
  std::string name = py::str(a.dtype()).cast<std::string>();
  for (const auto& [numpyName, t] : kinds)
    if (name == numpyName) {
      Shape shape(a.shape(), a.shape() + a.ndim());
      return TensorType{t, shape};
    }
  throw Error(what + ": numpy dtype " + name +
              " is not one shardc runs (float32, float64, float16, int64, int32, bool; uint16 for "
              "bfloat16's bits)");
}

// A C-contiguous view of `o` (a copy only when it is not one already).
py::array contiguous(const py::handle& o) {
  return py::array::ensure(o, py::array::c_style);
}

Tensor toTensor(const py::handle& o, const std::string& what) {
  py::array a = contiguous(o);
  if (!a) throw Error(what + ": not an array");
  Tensor t(typeOf(a, what));
  if (t.byteSize()) std::memcpy(t.data(), a.data(), t.byteSize());
  return t;
}

// The tensor's bytes become the array's, without a copy.
py::array toArray(Tensor t) {
  auto* owned = new Tensor(std::move(t));
  py::capsule free(owned, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(owned->shape().begin(), owned->shape().end());
  return py::array(numpyDType(owned->dtype()), shape, owned->data(), free);
}

py::dict toDict(NamedTensors tensors) {
  py::dict out;
  for (auto& [name, t] : tensors)
    out[py::str(name)] = toArray(std::move(t));
  return out;
}

NamedTensors namedTensors(const py::dict& d, const std::string& what) {
  NamedTensors out;
  for (auto [k, v] : d) {
    std::string name = py::str(k);
    out.emplace_back(name, toTensor(v, what + " '" + name + "'"));
  }
  return out;
}

// Samples read in place: the array stays alive (its reference dropped under the GIL) while
// the run reads it.
std::vector<std::pair<std::string, SampleArray>> sampleArrays(const py::dict& d,
                                                              const std::string& what) {
  std::vector<std::pair<std::string, SampleArray>> out;
  for (auto [k, v] : d) {
    std::string name = py::str(k);
    py::array a = contiguous(v);
    if (!a) throw Error(what + " '" + name + "': not an array");
    auto* keep = new py::object(a);
    std::shared_ptr<const void> owner(keep, [](const void* p) {
      py::gil_scoped_acquire gil;
      delete static_cast<const py::object*>(p);
    });
    out.emplace_back(name,
                     SampleArray{what + " '" + name + "'", typeOf(a, what + " '" + name + "'"),
                                 static_cast<const uint8_t*>(a.data()), owner, nullptr});
  }
  return out;
}

// Runs `work` on a worker thread while this (the calling Python) thread waits, the GIL
// released, and runs Python's signal handlers every 100 ms: a handler that raises
// (Ctrl-C's KeyboardInterrupt) asks the work to stop (Interrupt.h) and its exception is
// returned, for the caller to raise once it has kept what the work finished. None otherwise.
// The work's own exception is rethrown unless a handler's came first.
py::object runWatchingSignals(const std::function<void()>& work) {
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  py::object raised = py::none();
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      InterruptScope scope(stop);
      try {
        work();
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(m);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
      if (stop) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          raised = py::error_already_set().value();
          stop = true;
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (failure && raised.is_none()) std::rethrow_exception(failure);
  return raised;
}

py::dict compileCommand(const std::vector<std::string>& args, const std::string& recordedModel) {
  CompileOptions o = parseCompileCommand(args);
  // A module exported to a temporary file is recorded by what it is, not by that file's name.
  if (!recordedModel.empty())
    std::replace(o.commandLine.begin(), o.commandLine.end(), o.model, recordedModel);
  CompileResult r;
  py::object interrupted = runWatchingSignals([&] { r = compileModel(o); });
  py::dict out;
  out["interrupted"] = interrupted;
  out["pef"] = r.pefPath;
  out["log"] = r.logPath;
  out["estimate"] = r.estimate;
  return out;
}

py::dict runCommand(const std::vector<std::string>& args, const py::dict& inputs,
                    const py::dict& data, const py::dict& evalData, const py::object& weights,
                    const py::object& state, int64_t stepsBefore) {
  if (mpi::launchedByMpi())
    throw Error("under mpirun, run a PEF from an app script's run command (shardc.app.main) or "
                "with `shardc run`: Pef.run and Pef.train run thread devices in one process");
  RunOptions o = parseRunCommand(args);
  RunArrays arrays;
  arrays.stepsBefore = stepsBefore;
  for (auto [k, v] : inputs) {
    std::string name = py::str(k);
    arrays.inputs.emplace(name, toTensor(v, "input '" + name + "'"));
  }
  arrays.data = sampleArrays(data, "data");
  arrays.evalData = sampleArrays(evalData, "eval data");
  if (!weights.is_none()) arrays.weights = namedTensors(weights.cast<py::dict>(), "weights");
  if (!state.is_none()) arrays.state = namedTensors(state.cast<py::dict>(), "state");
  py::object interrupted = runWatchingSignals([&] {
    runPef(o, &arrays);
    std::fflush(stdout);
  });
  py::dict out;
  out["interrupted"] = interrupted;
  out["steps_run"] = arrays.stepsRun;
  out["outputs"] = toDict(std::move(arrays.outputs));
  out["params"] = toDict(std::move(arrays.params));
  out["state"] = toDict(std::move(arrays.stateAfter));
  out["records"] = arrays.records;
  return out;
}

// The PEF's parameters and opt_state as compiled.
py::dict weightsOf(const std::string& path) {
  LoadedPef l = loadPef(path);
  NamedTensors params, state;
  for (auto& [name, t] : l.pef.weights) {
    const Value* a = l.entry->findArgument(name);
    (a && a->argKind() == ArgKind::Param ? params : state).emplace_back(name, std::move(t));
  }
  py::dict out;
  out["params"] = toDict(std::move(params));
  out["state"] = toDict(std::move(state));
  return out;
}

int mainCommand(const std::vector<std::string>& argv) {
  std::vector<char*> ptrs;
  for (const std::string& a : argv)
    ptrs.push_back(const_cast<char*>(a.c_str()));
  ptrs.push_back(nullptr);
  py::gil_scoped_release release;
  int status = commandLineMain(static_cast<int>(argv.size()), ptrs.data());
  std::fflush(stdout);
  return status;
}

} // namespace

PYBIND11_MODULE(_shardc, m) {
  m.doc() = "shardc's library: compile, run, inspect (used through the shardc package)";
  m.attr("__version__") = kShardcVersion;
  static py::exception<Error> error(m, "Error");
  py::register_local_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      error(e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      error(e.what());
    } catch (const std::bad_alloc&) {
      error("out of memory");
    } catch (const py::error_already_set&) {
      throw; // Python's own exceptions, and pybind11's, pass through
    } catch (const py::builtin_exception&) {
      throw;
    } catch (const std::exception& e) {
      error((std::string("internal error: ") + e.what()).c_str());
    }
  });
  m.def("compile", &compileCommand, py::arg("args"), py::arg("recorded_model") = "",
        "Compiles as `shardc compile ARGS...` (ARGS from `compile` on), recording the model as "
        "`recorded_model` when given; returns {pef, log, estimate, interrupted} (interrupted: "
        "the exception a signal handler raised, or None).");
  m.def("run", &runCommand, py::arg("args"), py::arg("inputs"), py::arg("data"),
        py::arg("eval_data"), py::arg("weights"), py::arg("state"), py::arg("steps_before") = 0,
        "Runs as `shardc run ARGS...` with arrays in place of files; returns {outputs, params, "
        "state, records, interrupted, steps_run} (interrupted: the exception a signal handler "
        "raised, the run having stopped after steps_run steps; else None).");
  m.def(
      "inspect",
      [](const std::string& path, bool json, bool sections) {
        return inspectPef(path, json, sections);
      },
      py::arg("path"), py::arg("json") = true, py::arg("sections") = false,
      "`shardc inspect PATH [--json] [--sections]`'s text.");
  m.def("weights", &weightsOf, py::arg("path"),
        "{params, state}: the PEF's parameters and opt_state as compiled.");
  m.def("program", &pefProgram, py::arg("path"), "The PEF's program as text IR.");
  m.def(
      "report",
      [](const std::string& path, const std::string& output, const std::string& metrics,
         const std::string& stats) {
        py::gil_scoped_release release;
        return reportPef({path, output, metrics, stats});
      },
      py::arg("path"), py::arg("output") = "", py::arg("metrics") = "", py::arg("stats") = "",
      "`shardc report PATH [-o OUTPUT] [--metrics M] [--stats S]`; returns the page's path.");
  m.def("main", &mainCommand, py::arg("argv"),
        "`shardc` itself: argv[0] the program, then a command and its flags; returns the exit "
        "status.");
}
