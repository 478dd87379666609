// The shared-library artifact: a model's object and libkiln_rt linked by lld (as a library, in
// this process) into one ELF shared object that a program can dlopen with nothing else installed.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "engine/codegen/llvm/codegen.h"

namespace kiln::codegen {

// lib<prefix>.so from `native.object`: exports only `<prefix>_*` (the runtime's symbols are
// hidden inside it), needs libc, libm and libmvec, is never unloaded (-z nodelete: its thread
// pool may be running). Byte-identical for identical objects. x86_64 Linux targets only (the
// embedded runtime is built for this host): another target is FailedPrecondition.
absl::StatusOr<std::string> LinkSharedLibrary(const NativeModule& native);

// OK when LinkSharedLibrary can link for `target` (checked before code generation too).
absl::Status CheckSharedLibraryTarget(const ResolvedTarget& target);

}  // namespace kiln::codegen
