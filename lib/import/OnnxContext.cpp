#include "OnnxContext.h"

#include "shardc/import/OnnxImporter.h"
#include "shardc/ops/OpRegistry.h"
#include "shardc/support/Error.h"
#include "shardc/transforms/Passes.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace shardc::onnximport {

DType dtypeFromOnnx(int32_t t, const std::string& where) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::BOOL:
    return DType::I1;
  default:
    throw Error(where + ": ONNX element type " +
                onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(t)) +
                " is not supported (supported: float, float16, bfloat16, double, int64, int32, "
                "bool)");
  }
}

Tensor tensorFromProto(const onnx::TensorProto& t, const std::string& where) {
  DType dt = dtypeFromOnnx(t.data_type(), where);
  Shape shape(t.dims().begin(), t.dims().end());
  if (!checkedNumel(shape)) throw Error(where + ": invalid shape " + shapeStr(shape));
  Tensor out(TensorType{dt, shape});
  int64_t n = out.numel();
  if (t.has_raw_data()) {
    if (t.raw_data().size() != out.byteSize())
      throw Error(where + ": holds " + std::to_string(t.raw_data().size()) + " bytes, " +
                  out.type().str() + " needs " + std::to_string(out.byteSize()));
    if (out.byteSize()) std::memcpy(out.data(), t.raw_data().data(), out.byteSize());
    if (dt == DType::I1)
      for (size_t i = 0; i < out.byteSize(); ++i)
        out.data()[i] = out.data()[i] != 0;
    return out;
  }
  auto check = [&](int64_t have) {
    if (have != n)
      throw Error(where + ": holds " + std::to_string(have) + " values, " + out.type().str() +
                  " needs " + std::to_string(n));
  };
  switch (dt) {
  case DType::F32:
    check(t.float_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.setDouble(i, t.float_data(static_cast<int>(i)));
    break;
  case DType::F64:
    check(t.double_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.setDouble(i, t.double_data(static_cast<int>(i)));
    break;
  case DType::I64:
    check(t.int64_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, t.int64_data(static_cast<int>(i)));
    break;
  case DType::I32:
  case DType::I1:
    check(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, t.int32_data(static_cast<int>(i)));
    break;
  case DType::F16:
  case DType::BF16: // 16-bit patterns stored in int32_data
    check(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
      std::memcpy(out.data() + 2 * i, &bits, 2);
    }
    break;
  }
  return out;
}

const Entry* Context::lookup(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

std::string Context::nodeDesc() const {
  if (!node_) return file_;
  std::string name =
      node_->name().empty()
          ? "(unnamed, output '" + (node_->output_size() ? node_->output(0) : std::string()) + "')"
          : "'" + node_->name() + "'";
  return file_ + ": node " + name + " (" + node_->op_type() + ", opset " + std::to_string(opset_) +
         ")";
}

void Context::fail(const std::string& message) const {
  throw Error(nodeDesc() + ": " + message);
}

size_t Context::numInputs() const {
  return static_cast<size_t>(node_->input_size());
}

bool Context::hasInput(size_t i) const {
  return i < numInputs() && !node_->input(static_cast<int>(i)).empty();
}

Entry Context::in(size_t i) {
  if (!hasInput(i)) fail("input " + std::to_string(i) + " is required");
  const std::string& name = node_->input(static_cast<int>(i));
  auto it = values_.find(name);
  if (it == values_.end()) fail("input '" + name + "' is not defined before this node");
  return it->second;
}

TensorType Context::inputType(size_t i) {
  return typeOf(in(i));
}

TensorType Context::typeOf(const Entry& e) const {
  return e.value ? e.value->type() : e.constant->type();
}

Value* Context::materialize(Entry& e) {
  if (!e.value) e.value = b_.value("constant", {}, {{"value", e.constant}});
  return e.value;
}

Value* Context::input(size_t i) {
  in(i); // checks presence
  Entry& e = values_[node_->input(static_cast<int>(i))];
  return materialize(e);
}

const Tensor* Context::constantInput(size_t i) {
  Entry e = in(i);
  return e.constant ? e.constant.get() : e.initializer.get();
}

const Tensor& Context::requireConstant(size_t i, const std::string& what) {
  const Tensor* t = constantInput(i);
  if (!t)
    fail(what + " (input " + std::to_string(i) + ", '" + node_->input(static_cast<int>(i)) +
         "') must be known at compile time; it depends on run-time data");
  return *t;
}

std::vector<int64_t> Context::constantInts(size_t i, const std::string& what) {
  const Tensor& t = requireConstant(i, what);
  if (!isInteger(t.dtype())) fail(what + " must be an integer tensor, got " + t.type().str());
  return t.toInts();
}

int64_t Context::axis(int64_t axis, int64_t rank) const {
  auto n = normalizeAxis(axis, rank);
  if (!n)
    fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return *n;
}

void Context::carry(Value* state, Entry next) {
  for (const auto& [v, e] : carried)
    if (v == state) fail("state '" + state->name() + "' is updated by two nodes");
  carried.emplace_back(state, std::move(next));
}

Value* Context::rngState() {
  if (rng_) return rng_;
  if (f_.findArgument(kRngStateName))
    fail(std::string("the model already has an argument named '") + kRngStateName + "'");
  TensorType t{DType::I64, {2}};
  rng_ = f_.addArgument(kRngStateName, t, ArgKind::OptState);
  initialState[kRngStateName] = std::make_shared<Tensor>(t);
  Tensor one(t);
  one.setInt(1, 1);
  carry(rng_, emit1("add", {Entry{rng_, nullptr, nullptr}, constant(std::move(one))}));
  return rng_;
}

Entry Context::scalar(DType t, double v) {
  Tensor s(TensorType{t, {}});
  s.setDouble(0, v);
  return constant(std::move(s));
}

const onnx::AttributeProto* Context::findAttr(const std::string& name) const {
  readAttrs_.insert(name);
  for (const auto& a : node_->attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

void Context::checkAllAttrsRead() const {
  for (const auto& a : node_->attribute())
    if (!readAttrs_.count(a.name())) fail("attribute '" + a.name() + "' is not supported");
}

bool Context::hasAttr(const std::string& name) const {
  return findAttr(name) != nullptr;
}

int64_t Context::attrInt(const std::string& name, std::optional<int64_t> dflt) const {
  const auto* a = findAttr(name);
  if (!a) {
    if (!dflt) fail("attribute '" + name + "' is required");
    return *dflt;
  }
  if (a->type() != onnx::AttributeProto::INT) fail("attribute '" + name + "' must be an int");
  return a->i();
}

float Context::attrFloat(const std::string& name, std::optional<float> dflt) const {
  const auto* a = findAttr(name);
  if (!a) {
    if (!dflt) fail("attribute '" + name + "' is required");
    return *dflt;
  }
  if (a->type() != onnx::AttributeProto::FLOAT) fail("attribute '" + name + "' must be a float");
  return a->f();
}

double Context::attrDecimal(const std::string& name, float dflt) const {
  float f = attrFloat(name, dflt);
  if (!std::isfinite(f)) return f;
  char text[64];
  auto written = std::to_chars(text, text + sizeof text, f);
  double d = f;
  std::from_chars(text, written.ptr, d);
  return d;
}

std::string Context::attrString(const std::string& name, std::optional<std::string> dflt) const {
  const auto* a = findAttr(name);
  if (!a) {
    if (!dflt) fail("attribute '" + name + "' is required");
    return *dflt;
  }
  if (a->type() != onnx::AttributeProto::STRING) fail("attribute '" + name + "' must be a string");
  return a->s();
}

std::vector<int64_t> Context::attrInts(const std::string& name,
                                       std::optional<std::vector<int64_t>> dflt) const {
  const auto* a = findAttr(name);
  if (!a) {
    if (!dflt) fail("attribute '" + name + "' is required");
    return *dflt;
  }
  if (a->type() != onnx::AttributeProto::INTS)
    fail("attribute '" + name + "' must be a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

std::vector<std::string> Context::attrStrings(const std::string& name,
                                              std::optional<std::vector<std::string>> dflt) const {
  const auto* a = findAttr(name);
  if (!a) {
    if (!dflt) fail("attribute '" + name + "' is required");
    return *dflt;
  }
  if (a->type() != onnx::AttributeProto::STRINGS)
    fail("attribute '" + name + "' must be a list of strings");
  return {a->strings().begin(), a->strings().end()};
}

const onnx::TensorProto& Context::attrTensor(const std::string& name) const {
  const auto* a = findAttr(name);
  if (!a) fail("attribute '" + name + "' is required");
  if (a->type() != onnx::AttributeProto::TENSOR) fail("attribute '" + name + "' must be a tensor");
  return a->t();
}

std::vector<Entry> Context::emit(const std::string& name, const std::vector<Entry>& operands,
                                 AttrDict attrs) {
  const OpDef* def = OpRegistry::get().lookup(name);
  std::vector<TensorType> operandTypes, resultTypes;
  bool allConstant = true;
  for (const Entry& e : operands) {
    operandTypes.push_back(typeOf(e));
    allConstant &= e.constant != nullptr;
  }
  std::string err = checkOp(*def, operandTypes, attrs, resultTypes);
  if (!err.empty()) fail("cannot be mapped to '" + name + "': " + err);
  int64_t total = 0;
  for (const auto& t : resultTypes)
    total += t.numel();
  if (allConstant && total <= kFoldLimit) {
    std::vector<const Tensor*> inputs;
    for (const Entry& e : operands)
      inputs.push_back(e.constant.get());
    try {
      std::vector<Entry> out;
      for (Tensor& t : def->kernel(KernelArgs{inputs, attrs, resultTypes, nullptr}))
        out.push_back(constant(std::move(t)));
      return out;
    } catch (const Error&) {
      // Fall through: the op fails at run time with the interpreter's message.
    }
  }
  std::vector<Value*> values;
  for (Entry e : operands)
    values.push_back(materialize(e));
  Op* op = b_.create(name, values, std::move(attrs));
  std::vector<Entry> out;
  for (size_t i = 0; i < op->numResults(); ++i)
    out.push_back(Entry{op->result(i), nullptr, nullptr});
  return out;
}

} // namespace shardc::onnximport
