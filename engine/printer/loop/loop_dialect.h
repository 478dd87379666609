// The loop dialect's printer: Doc builders for PrimFuncs, statements, expressions and buffers,
// registered under the dispatch token "loop" (and in the default layer, so a PrimFunc met while
// a module of the graph dialect is printing still finds its builder). Its Docs render as the
// Python-like script of docs/loop-script-format.md.
#pragma once

#include <string>

#include "engine/ir/object.h"
#include "engine/loop/prim_func.h"
#include "engine/printer/ir_docsifier.h"

namespace kiln::printer {

inline constexpr char kLoopDispatchToken[] = "loop";

// The one registration call of the loop dialect (called from RegisterBuiltinDialects).
void RegisterLoopDialectPrinter(IRDocsifier::Registry& registry);

// True for the nodes of the loop dialect: PrimFunc, statements, expressions and buffers.
bool IsLoopDialectNode(const Object* node);

// The script of `func` as the module function `name` prints it (`@T.prim_func def name(...)`),
// without an enclosing module: what the JSON form of a module carries for a PrimFunc.
std::string PrintPrimFuncScript(const std::string& name, const loop::PrimFunc& func,
                                bool show_spans);

}  // namespace kiln::printer
