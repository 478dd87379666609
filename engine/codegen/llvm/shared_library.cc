// LinkSharedLibrary: ld.lld run on files in a private temporary directory. lld runs as its own
// process, not as liblld in this one: its driver resets every LLVM command-line option when a
// link ends (the options code generation sets, see target.cc), keeps a link's state in globals,
// and a crash in it must not take kilnd down.
#include "engine/codegen/llvm/shared_library.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/TargetParser/Triple.h"

extern char** environ;

extern "C" {
// runtime_object.c: libkiln_rt as one relocatable object.
extern const char kiln_runtime_object[];
extern const char kiln_runtime_object_end[];
}

namespace kiln::codegen {
namespace {

namespace fs = std::filesystem;

// A directory of its own under $TMPDIR, removed with everything in it.
class TemporaryDirectory {
 public:
  static absl::StatusOr<TemporaryDirectory> Create() {
    std::error_code error;
    fs::path base = fs::temp_directory_path(error);
    if (error) base = "/tmp";
    std::string pattern = (base / "kiln-link-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a directory under ", base.string(),
                                              " to link the shared library"));
    }
    return TemporaryDirectory(pattern);
  }
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TemporaryDirectory(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

absl::Status WriteFile(const fs::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(data, static_cast<std::streamsize>(size));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs `args` (args[0] a path) with stdin from /dev/null and stdout and stderr into `log`; kills
// it after `limit`. The exit status, or an error.
absl::StatusOr<int> RunProcess(const std::vector<std::string>& args, const fs::path& log,
                               std::chrono::seconds limit) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, args[0].c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot run ", args[0], " (", std::strerror(spawned), "); shared libraries need lld-19"));
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (true) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return absl::InternalError("waiting for ld.lld failed");
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::DeadlineExceededError(
          absl::StrCat("ld.lld did not finish linking within ", limit.count(), " s"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status)) return absl::InternalError("ld.lld was killed by a signal");
  return WEXITSTATUS(status);
}

}  // namespace

absl::Status CheckSharedLibraryTarget(const ResolvedTarget& target) {
  llvm::Triple triple(target.triple);
  if (triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "shared libraries are linked for x86_64 Linux targets only (the libkiln_rt they carry is "
      "built for this host); the target is ", target.triple,
      ": ask for the object and link it with that target's libkiln_rt"));
}

absl::StatusOr<std::string> LinkSharedLibrary(const NativeModule& native) {
  if (absl::Status status = CheckSharedLibraryTarget(native.target); !status.ok()) return status;
  absl::StatusOr<TemporaryDirectory> dir = TemporaryDirectory::Create();
  if (!dir.ok()) return dir.status();
  fs::path object = dir->path() / "model.o";
  fs::path runtime = dir->path() / "kiln_runtime.o";
  fs::path exports = dir->path() / "exports.map";
  fs::path output = dir->path() / "model.so";
  std::string version_script =
      absl::StrCat("{\n  global: ", native.symbol_prefix, "_*;\n  local: *;\n};\n");
  for (absl::Status status :
       {WriteFile(object, native.object.data(), native.object.size()),
        WriteFile(runtime, kiln_runtime_object,
                  static_cast<size_t>(kiln_runtime_object_end - kiln_runtime_object)),
        WriteFile(exports, version_script.data(), version_script.size())}) {
    if (!status.ok()) return status;
  }
  std::string soname = absl::StrCat("lib", native.symbol_prefix, ".so");
  std::vector<std::string> args = {
      KILN_LLD_PATH, "-shared", "-soname", soname, "-o", output.string(),
      "--version-script", exports.string(),
      // No build id or timestamps: identical objects give identical libraries.
      "--build-id=none", "-z", "now", "-z", "relro", "-z", "nodelete", "-z", "noexecstack",
      "--hash-style=gnu", "--as-needed", object.string(), runtime.string(),
      "-L/lib/x86_64-linux-gnu", "-L/usr/lib/x86_64-linux-gnu",
      // Sonames, not the -dev linker scripts: needs only the runtime packages.
      "-l:libmvec.so.1", "-l:libm.so.6", "-l:libc.so.6"};
  // A link copies the object once: far below this even for 100 MB of weights.
  absl::StatusOr<int> exit_code = RunProcess(args, dir->path() / "lld.log", std::chrono::seconds(300));
  if (!exit_code.ok()) return exit_code.status();
  if (*exit_code != 0) {
    return absl::InternalError(absl::StrCat("ld.lld could not link the shared library: ",
                                            ReadFile(dir->path() / "lld.log").substr(0, 2000)));
  }
  std::string bytes = ReadFile(output);
  if (bytes.empty()) return absl::InternalError("ld.lld wrote no shared library");
  return bytes;
}

}  // namespace kiln::codegen
