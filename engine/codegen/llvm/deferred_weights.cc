#include "engine/codegen/llvm/deferred_weights.h"

#include <cstring>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Constants.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"

namespace kiln::codegen {

bool DefineDeferredWeights(const std::vector<DeferredWeight>& weights,
                           const lower::LoweredModule& lowered, const llvm::Triple& triple) {
  // Patching finds a weight by its symbol in the ELF symbol table, where an internal global
  // keeps its name; other formats get the bytes themselves.
  bool patch = triple.isOSBinFormatELF();
  for (const DeferredWeight& weight : weights) {
    llvm::GlobalVariable& global = *weight.global;
    if (patch) {
      // Read-only zeros stay in .rodata as a fill (a constant is never put in .bss), at the
      // offset the patch writes to.
      global.setInitializer(llvm::ConstantAggregateZero::get(global.getValueType()));
    } else {
      const std::string& bytes = lowered.constants[weight.constant_index].second->bytes;
      global.setInitializer(
          llvm::ConstantDataArray::getString(global.getContext(), bytes, /*AddNull=*/false));
    }
    global.setLinkage(llvm::GlobalValue::InternalLinkage);
    global.setVisibility(llvm::GlobalValue::DefaultVisibility);
  }
  return patch;
}

absl::Status PatchDeferredWeights(const std::vector<DeferredWeight>& weights,
                                  const lower::LoweredModule& lowered, std::string& object) {
  if (weights.empty()) return absl::OkStatus();
  std::unordered_map<std::string, const DeferredWeight*> by_name;
  for (const DeferredWeight& weight : weights) by_name[weight.global->getName().str()] = &weight;
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "model.o"));
  if (!file) {
    return absl::InternalError(
        absl::StrCat("reading the object to write its weights: ", llvm::toString(file.takeError())));
  }
  size_t patched = 0;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    auto it = by_name.find(name->str());
    if (it == by_name.end()) continue;
    const std::string& bytes = lowered.constants[it->second->constant_index].second->bytes;
    llvm::Expected<llvm::object::section_iterator> section = symbol.getSection();
    llvm::Expected<uint64_t> address = symbol.getAddress();
    if (!section || !address || *section == (*file)->section_end()) {
      if (!section) llvm::consumeError(section.takeError());
      if (!address) llvm::consumeError(address.takeError());
      return absl::InternalError(absl::StrCat("weight ", name->str(), " has no place in the object"));
    }
    llvm::Expected<llvm::StringRef> contents = (*section)->getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return absl::InternalError(absl::StrCat("weight ", name->str(), "'s section has no contents"));
    }
    uint64_t offset = *address - (*section)->getAddress();
    if (offset > contents->size() || bytes.size() > contents->size() - offset) {
      return absl::InternalError(absl::StrCat("weight ", name->str(), " (", bytes.size(),
                                              " bytes) does not fit its section at ", offset));
    }
    size_t file_offset = static_cast<size_t>(contents->data() - object.data()) + offset;
    std::memcpy(object.data() + file_offset, bytes.data(), bytes.size());
    ++patched;
  }
  if (patched != weights.size()) {
    return absl::InternalError(absl::StrCat("the object holds ", patched, " of ", weights.size(),
                                            " deferred weights"));
  }
  return absl::OkStatus();
}

}  // namespace kiln::codegen
