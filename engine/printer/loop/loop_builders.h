// Internal to the loop dialect's printer: the builders and helpers its translation units
// share. Nothing outside engine/printer/loop/ includes this.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/span.h"
#include "engine/loop/buffer.h"
#include "engine/loop/expr.h"
#include "engine/loop/stmt.h"
#include "engine/printer/doc.h"
#include "engine/printer/ir_docsifier.h"

namespace kiln::printer::loop_printer {

// `T.attr`: every dialect-provided name of the script lives under the `T` prefix.
ExprDoc TAttr(std::string_view attr);
// `T.callee(args...)`.
std::shared_ptr<CallDocNode> TCall(std::string_view callee, std::vector<ExprDoc> args);
// `T.int64`, `T.float32x4`.
ExprDoc PrimTypeDoc(const loop::PrimType& type);

// A name hint made into a Python identifier that shadows neither a keyword nor `T` nor `range`.
std::string LoopName(std::string_view hint);
// `si=SPAN` for a statement's comment, or "" when the span is absent or spans are hidden.
std::string LoopSpanComment(IRDocsifier& d, const Span& span);

// A variable as it prints here: its name, defined (and declared, see LoopFunctionFrame) on
// first sight when nothing defined it.
ExprDoc VarDoc(IRDocsifier& d, const loop::VarNode* var);
// A buffer as it prints here: its name, defined and declared on first sight.
ExprDoc BufferDoc(IRDocsifier& d, const loop::Buffer& buffer);
// `T.Buffer((4, 8), "float32", data=..., strides=..., elem_offset=..., scope=...)`; `data` is
// left out when the buffer's storage is `implied_storage` or was not defined yet.
ExprDoc BufferCallDoc(IRDocsifier& d, const loop::BufferNode* buffer,
                      const loop::VarNode* implied_storage);

// The statements `stmt` prints as (a SeqStmt, Allocate or LetStmt is several).
std::vector<StmtDoc> StmtList(IRDocsifier& d, const loop::Stmt& stmt);

// Builders, one per node kind (registered in register.cc).
Doc BuildPrimFunc(const ObjectRef& node, IRDocsifier& d);
Doc BuildBuffer(const ObjectRef& node, IRDocsifier& d);

Doc BuildFor(const ObjectRef& node, IRDocsifier& d);
Doc BuildBufferStore(const ObjectRef& node, IRDocsifier& d);
Doc BuildAllocate(const ObjectRef& node, IRDocsifier& d);
Doc BuildIfThenElse(const ObjectRef& node, IRDocsifier& d);
Doc BuildLetStmt(const ObjectRef& node, IRDocsifier& d);
Doc BuildSeqStmt(const ObjectRef& node, IRDocsifier& d);
Doc BuildEvaluate(const ObjectRef& node, IRDocsifier& d);
Doc BuildCallKernel(const ObjectRef& node, IRDocsifier& d);
Doc BuildAssert(const ObjectRef& node, IRDocsifier& d);
Doc BuildWhile(const ObjectRef& node, IRDocsifier& d);

Doc BuildIntImm(const ObjectRef& node, IRDocsifier& d);
Doc BuildFloatImm(const ObjectRef& node, IRDocsifier& d);
Doc BuildStringImm(const ObjectRef& node, IRDocsifier& d);
Doc BuildVar(const ObjectRef& node, IRDocsifier& d);
Doc BuildBinary(const ObjectRef& node, IRDocsifier& d);
Doc BuildNot(const ObjectRef& node, IRDocsifier& d);
Doc BuildCast(const ObjectRef& node, IRDocsifier& d);
Doc BuildSelect(const ObjectRef& node, IRDocsifier& d);
Doc BuildIntrinsicCall(const ObjectRef& node, IRDocsifier& d);
Doc BuildBufferLoad(const ObjectRef& node, IRDocsifier& d);
Doc BuildRamp(const ObjectRef& node, IRDocsifier& d);
Doc BuildBroadcast(const ObjectRef& node, IRDocsifier& d);

}  // namespace kiln::printer::loop_printer
