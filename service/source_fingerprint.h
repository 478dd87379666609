// The fingerprint of the sources kilnd was built from (cmake/source_fingerprint.cmake): the
// SHA-256 over the sources in engine/, service/, protos/, LLVM's version and the toolchain that
// builds the runtime artifacts embed. The project's version names a
// release, not the code: without this, two builds of one version whose code generation differs
// would give equal requests one compile id, and a shared result cache would serve one build's
// artifacts to the other.
#pragma once

namespace kiln::service {

// 64 lowercase hex digits, fixed when the build ran.
const char* SourceFingerprint();

// The project's release (CMakeLists.txt's project VERSION), e.g. "0.1.0".
const char* KilnRelease();

}  // namespace kiln::service
