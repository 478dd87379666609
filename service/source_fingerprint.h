// The fingerprint of the sources kilnd was built from (cmake/source_fingerprint.cmake): the
// SHA-256 over engine/, service/, protos/ and LLVM's version. The project's version names a
// release, not the code: without this, two builds of one version whose code generation differs
// would give equal requests one compile id, and a shared result cache would serve one build's
// artifacts to the other.
#pragma once

namespace kiln::service {

// 64 lowercase hex digits, fixed when the build ran.
const char* SourceFingerprint();

}  // namespace kiln::service
