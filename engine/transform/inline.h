// Inline: replaces calls of module functions marked `Inline=1` by their
// bodies, so the optimizations that work inside one function (fusion, CSE)
// see across the call, and drops the inlined functions no one calls anymore.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// The attribute that marks a function for inlining.
inline constexpr char kAttrInline[] = "Inline";

// Each call `@f(args)` of a function marked Inline (and not Primitive) becomes
// f's body with its parameters replaced by the arguments and every variable
// it binds renamed to a fresh one (each copy binds its own). Functions inlined
// into each other are expanded innermost first; a function that reaches
// itself through inlined calls is never inlined (it would not terminate).
// Each node of a copy carries its own span followed by the call's (MLIR's
// call-site locations): [body span, call span], or the call's span alone for
// a node that had none; with `ir.enable_si_builder` off, spans are copied as
// they are.
// Marked functions left without callers are removed (never `main`). Opt
// level 1.
Pass Inline();

}  // namespace kiln::transform
