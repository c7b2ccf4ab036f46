// A sharding plan: the mesh and, for values and results of a function (or of every function
// of a module), their sharding and where it came from (so a user can ask why a tensor is laid
// out the way it is).
#pragma once

#include "shardc/sharding/Mesh.h"

#include <map>
#include <string>
#include <unordered_map>

namespace shardc {
class Function;
class Op;
class Value;

enum class OriginKind {
  User,       // given in the IR or a strategy file; never changed
  Tactic,     // chosen by a tactic (data parallel, Megatron, ZeRO, the search); never changed
  Propagated, // inferred through an op from its neighbours
  Default,    // nothing reached it: replicated
};

struct ShardingOrigin {
  OriginKind kind = OriginKind::Default;
  std::string detail; // tactic name, or why a value without `op` was propagated
  // Propagated through this op from its operand (then result) number `tensor`; described
  // only when asked, as propagation sets origins far more often than anyone reads them. (A
  // plan, like its Value keys, must not outlive changes to its function.)
  const Op* op = nullptr;
  size_t tensor = 0;
  // "user", "tactic data-parallel", "propagated from matmul %y (operand 1)", "default".
  std::string str() const;
  bool fixed() const { return kind == OriginKind::User || kind == OriginKind::Tactic; }
};

struct ValueSharding {
  TensorSharding sharding;
  ShardingOrigin origin;
};

class ShardingPlan {
public:
  ShardingPlan() = default;
  explicit ShardingPlan(Mesh mesh) : mesh_(std::move(mesh)) {}

  const Mesh& mesh() const { return mesh_; }
  const ValueSharding* find(const Value* v) const;
  // The sharding of `v`, replicated when it has none.
  TensorSharding shardingOf(const Value* v) const;
  void set(const Value* v, TensorSharding s, ShardingOrigin origin);
  size_t size() const { return values_.size(); }

  // The sharding required of function result `index` of `f`. Kept apart from the returned
  // value's own sharding: a value may be returned twice, or used inside as well.
  const ValueSharding* findResult(const Function& f, size_t index) const;
  void setResult(const Function& f, size_t index, TensorSharding s, ShardingOrigin origin);

private:
  Mesh mesh_;
  std::unordered_map<const Value*, ValueSharding> values_;
  std::map<std::pair<const Function*, size_t>, ValueSharding> results_;
};

} // namespace shardc
