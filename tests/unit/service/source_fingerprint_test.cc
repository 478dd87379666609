// The version kilnd reports and keys compile ids by names the code it was built from: the build's
// fingerprint is the digest of this source tree as it is now (recomputed here on its own, file by
// file), so editing any engine, service or protocol source gives a new version and new ids.
// (The toolchain string is CMake's, passed to both: the test checks the sources, not the flags.)
#include "service/source_fingerprint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "service/compile_request.h"
#include "service/sha256.h"

namespace kiln::service {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(SourceFingerprintTest, IsTheDigestOfTheSourcesAndLlvmItWasBuiltWith) {
  const fs::path root = KILN_SOURCE_DIR;
  std::vector<std::string> files;
  auto is_source = [](const fs::path& path) {
    const std::string ext = path.extension().string();
    return ext == ".cc" || ext == ".h" || ext == ".c" || ext == ".proto" ||
           path.filename() == "CMakeLists.txt";
  };
  for (const char* dir : {"engine", "service", "protos"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (entry.is_regular_file() && is_source(entry.path())) {
        files.push_back(fs::relative(entry.path(), root).string());
      }
    }
  }
  ASSERT_GT(files.size(), 100u);
  std::sort(files.begin(), files.end());
  std::string manifest;
  for (const std::string& file : files) {
    manifest += file + " " + Sha256Hex(ReadBytes(root / file)) + "\n";
  }
  manifest += std::string("llvm ") + KILN_LLVM_VERSION + "\n";
  manifest += std::string("toolchain ") + KILN_TOOLCHAIN + "\n";
  EXPECT_EQ(SourceFingerprint(), Sha256Hex(manifest))
      << "the build's fingerprint is not that of the sources at " << root;
}

TEST(SourceFingerprintTest, IsPartOfTheVersionResponsesAndCompileIdsCarry) {
  EXPECT_EQ(std::string(KilnRelease()), KILN_RELEASE);
  EXPECT_EQ(std::string(KilnVersion()),
            std::string(KILN_RELEASE) + "+" + std::string(SourceFingerprint()).substr(0, 12));
}

}  // namespace
}  // namespace kiln::service
