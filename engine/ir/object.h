// The object model every IR node is built on: immutable nodes with an intrusive
// atomic reference count and a kind tag, held through Ref<T> handles.
//
// Nodes never change after construction, so a module can be shared between
// worker threads without locks, and "did a rewrite change this?" is a pointer
// comparison (`same_as`). Destruction is iterative: dropping the last handle to
// a 20,000-node chain must not recurse once per node.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "engine/support/check.h"

namespace kiln {

// One tag per concrete node class. Dialects append their kinds; ranges let a
// base class (ExprNode, TypeNode) answer IsKind for all of its subclasses.
enum class ObjectKind : uint16_t {
  kSourceName,
  kSpan,
  kSequentialSpan,
  kVirtualDevice,
  kAttrs,
  kTensorData,
  // Types.
  kTensorType,
  kTupleType,
  kFuncType,
  // Graph expressions; kVar..kFunction must stay contiguous (ExprNode::IsKind).
  kVar,
  kGlobalVar,
  kConstant,
  kOp,
  kCall,
  kTuple,
  kTupleGetItem,
  kLet,
  kIf,
  kFunction,
  kPrimFunc,  // loop dialect function (engine/loop/prim_func.h); a BaseFunc
  kIRModule,
  // Loop-dialect expressions; kIntImm..kBroadcast must stay contiguous
  // (loop::PrimExprNode::IsKind).
  kIntImm,
  kFloatImm,
  kStringImm,
  kLoopVar,
  kBinary,
  kNot,
  kCast,
  kSelect,
  kIntrinsicCall,
  kBufferLoad,
  kRamp,
  kBroadcast,
  // Loop-dialect statements; kFor..kWhile must stay contiguous.
  kFor,
  kBufferStore,
  kAllocate,
  kIfThenElse,
  kLetStmt,
  kSeqStmt,
  kEvaluate,
  kCallKernel,
  kAssert,
  kWhile,
  kBuffer,
  kNumKinds,
};

const char* ObjectKindName(ObjectKind kind);

class Object {
 public:
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;
  virtual ~Object() = default;

  ObjectKind kind() const { return kind_; }
  static constexpr bool IsKind(ObjectKind) { return true; }

  void IncRef() const { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() const {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy(this);
  }
  int32_t use_count() const { return ref_count_.load(std::memory_order_relaxed); }

 protected:
  explicit Object(ObjectKind kind) : kind_(kind) {}

 private:
  // Deletes `object`; objects released while it is being deleted are queued and
  // deleted by the outermost call, so destruction depth stays constant.
  static void Destroy(const Object* object);

  mutable std::atomic<int32_t> ref_count_{0};
  const ObjectKind kind_;
};

// A counted handle to an immutable node of class T (or a subclass). Null is a
// valid value ("absent"). Access is always const.
template <typename T>
class Ref {
 public:
  using element_type = T;

  Ref() = default;
  Ref(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  explicit Ref(const T* ptr) : ptr_(ptr) {
    if (ptr_) ptr_->IncRef();
  }
  Ref(const Ref& other) : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  Ref(const Ref<U>& other) : Ref(other.get()) {}  // NOLINT(google-explicit-constructor)
  template <typename U, typename = std::enable_if_t<std::is_base_of_v<T, U>>>
  Ref(Ref<U>&& other) noexcept  // NOLINT(google-explicit-constructor)
      : ptr_(other.release()) {}
  ~Ref() {
    if (ptr_) ptr_->DecRef();
  }

  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  const T* get() const { return ptr_; }
  const T* operator->() const {
    KILN_CHECK(ptr_ != nullptr) << "dereferencing a null Ref";
    return ptr_;
  }
  const T& operator*() const { return *operator->(); }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool defined() const { return ptr_ != nullptr; }

  // Identity, not structure: see structural_equal.h for the latter.
  template <typename U>
  bool same_as(const Ref<U>& other) const {
    return static_cast<const Object*>(ptr_) == static_cast<const Object*>(other.get());
  }

  // Checked downcast: the node as a U, or nullptr when it is something else.
  template <typename U>
  const U* as() const {
    if (ptr_ != nullptr && U::IsKind(ptr_->kind())) return static_cast<const U*>(ptr_);
    return nullptr;
  }

  // Releases ownership without touching the count (used for moves across types).
  const T* release() { return std::exchange(ptr_, nullptr); }

 private:
  const T* ptr_ = nullptr;
};

template <typename T, typename U>
bool operator==(const Ref<T>& a, const Ref<U>& b) {
  return a.same_as(b);
}

template <typename T, typename... Args>
Ref<T> MakeRef(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

// Downcast that must succeed; a failure is a Kiln bug.
template <typename To, typename From>
Ref<To> Downcast(const Ref<From>& from) {
  if (!from) return Ref<To>();
  KILN_CHECK(To::IsKind(from->kind()))
      << "cannot downcast a " << ObjectKindName(from->kind()) << " node";
  return Ref<To>(static_cast<const To*>(from.get()));
}

using ObjectRef = Ref<Object>;

// Hash and equality by identity, for memo tables keyed by node.
struct RefHash {
  template <typename T>
  size_t operator()(const Ref<T>& ref) const {
    return std::hash<const void*>()(static_cast<const void*>(ref.get()));
  }
};
struct RefEqual {
  template <typename T>
  bool operator()(const Ref<T>& a, const Ref<T>& b) const {
    return a.same_as(b);
  }
};

}  // namespace kiln
