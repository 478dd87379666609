// Iterative destruction and kind names for the object model.
#include "engine/ir/object.h"

#include <vector>

namespace kiln {

namespace {
thread_local std::vector<const Object*>* pending_destruction = nullptr;
}  // namespace

void Object::Destroy(const Object* object) {
  if (pending_destruction != nullptr) {
    pending_destruction->push_back(object);
    return;
  }
  std::vector<const Object*> pending{object};
  pending_destruction = &pending;
  while (!pending.empty()) {
    const Object* next = pending.back();
    pending.pop_back();
    delete next;
  }
  pending_destruction = nullptr;
}

const char* ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kSourceName: return "SourceName";
    case ObjectKind::kSpan: return "Span";
    case ObjectKind::kSequentialSpan: return "SequentialSpan";
    case ObjectKind::kVirtualDevice: return "VirtualDevice";
    case ObjectKind::kAttrs: return "Attrs";
    case ObjectKind::kTensorData: return "TensorData";
    case ObjectKind::kTensorType: return "TensorType";
    case ObjectKind::kTupleType: return "TupleType";
    case ObjectKind::kFuncType: return "FuncType";
    case ObjectKind::kVar: return "Var";
    case ObjectKind::kGlobalVar: return "GlobalVar";
    case ObjectKind::kConstant: return "Constant";
    case ObjectKind::kOp: return "Op";
    case ObjectKind::kCall: return "Call";
    case ObjectKind::kTuple: return "Tuple";
    case ObjectKind::kTupleGetItem: return "TupleGetItem";
    case ObjectKind::kLet: return "Let";
    case ObjectKind::kIf: return "If";
    case ObjectKind::kFunction: return "Function";
    case ObjectKind::kIRModule: return "IRModule";
    case ObjectKind::kPrimFunc: return "PrimFunc";
    case ObjectKind::kIntImm: return "IntImm";
    case ObjectKind::kFloatImm: return "FloatImm";
    case ObjectKind::kStringImm: return "StringImm";
    case ObjectKind::kLoopVar: return "LoopVar";
    case ObjectKind::kBinary: return "Binary";
    case ObjectKind::kNot: return "Not";
    case ObjectKind::kCast: return "Cast";
    case ObjectKind::kSelect: return "Select";
    case ObjectKind::kIntrinsicCall: return "IntrinsicCall";
    case ObjectKind::kBufferLoad: return "BufferLoad";
    case ObjectKind::kRamp: return "Ramp";
    case ObjectKind::kBroadcast: return "Broadcast";
    case ObjectKind::kFor: return "For";
    case ObjectKind::kBufferStore: return "BufferStore";
    case ObjectKind::kAllocate: return "Allocate";
    case ObjectKind::kIfThenElse: return "IfThenElse";
    case ObjectKind::kLetStmt: return "LetStmt";
    case ObjectKind::kSeqStmt: return "SeqStmt";
    case ObjectKind::kEvaluate: return "Evaluate";
    case ObjectKind::kCallKernel: return "CallKernel";
    case ObjectKind::kAssert: return "Assert";
    case ObjectKind::kWhile: return "While";
    case ObjectKind::kBuffer: return "Buffer";
    case ObjectKind::kNumKinds: break;
  }
  return "<unknown>";
}

}  // namespace kiln
