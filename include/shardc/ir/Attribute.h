// Op attributes: named, typed constants attached to an op.
#pragma once

#include "shardc/ir/Tensor.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace shardc {

enum class AttrKind { Bool, Int, Float, String, Ints, Floats, Type, Tensor };
std::string_view attrKindName(AttrKind k);

// Tensor attributes are shared: copying an op (CSE, cloning) never copies weights.
using TensorRef = std::shared_ptr<const Tensor>;

class Attr {
public:
  using Storage = std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, DType, TensorRef>;
  Attr(bool v) : v_(v) {}
  Attr(int64_t v) : v_(v) {}
  Attr(int v) : v_(static_cast<int64_t>(v)) {}
  Attr(double v) : v_(v) {}
  Attr(std::string v) : v_(std::move(v)) {}
  Attr(const char* v) : v_(std::string(v)) {}
  Attr(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attr(std::vector<double> v) : v_(std::move(v)) {}
  Attr(DType v) : v_(v) {}
  Attr(TensorRef v) : v_(std::move(v)) {}

  AttrKind kind() const { return static_cast<AttrKind>(v_.index()); }
  bool asBool() const { return std::get<bool>(v_); }
  int64_t asInt() const { return std::get<int64_t>(v_); }
  double asFloat() const { return std::get<double>(v_); }
  const std::string& asString() const { return std::get<std::string>(v_); }
  const std::vector<int64_t>& asInts() const { return std::get<std::vector<int64_t>>(v_); }
  const std::vector<double>& asFloats() const { return std::get<std::vector<double>>(v_); }
  DType asType() const { return std::get<DType>(v_); }
  const Tensor& asTensor() const { return *std::get<TensorRef>(v_); }
  const TensorRef& tensorRef() const { return std::get<TensorRef>(v_); }

  // Structural equality; tensors compare by type and bits, floats by bits (so NaN == NaN
  // and -0.0 != 0.0, which is what CSE needs).
  bool operator==(const Attr& other) const;

private:
  Storage v_;
};

// An op's attributes, kept sorted by name so printing and comparison are canonical.
class AttrDict {
public:
  AttrDict() = default;
  AttrDict(std::initializer_list<std::pair<std::string, Attr>> init) {
    for (const auto& [k, v] : init)
      set(k, v);
  }
  void set(const std::string& name, Attr value);
  const Attr* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // Typed getters; the verifier has checked presence and kind against the op's schema.
  const Attr& get(std::string_view name) const;
  int64_t getInt(std::string_view name) const { return get(name).asInt(); }
  bool getBool(std::string_view name) const { return get(name).asBool(); }
  double getFloat(std::string_view name) const { return get(name).asFloat(); }
  const std::string& getString(std::string_view name) const { return get(name).asString(); }
  const std::vector<int64_t>& getInts(std::string_view name) const { return get(name).asInts(); }
  DType getType(std::string_view name) const { return get(name).asType(); }
  const Tensor& getTensor(std::string_view name) const { return get(name).asTensor(); }

  const std::vector<std::pair<std::string, Attr>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  bool operator==(const AttrDict& other) const { return entries_ == other.entries_; }

private:
  std::vector<std::pair<std::string, Attr>> entries_;
};

} // namespace shardc
