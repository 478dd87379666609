// DisassembleObject: MCDisassembler and MCInstPrinter over the object's functions, DWARF lines
// from DWARFContext.
#include "engine/codegen/llvm/disassembly.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/DebugInfo/DWARF/DWARFContext.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::codegen {
namespace {

struct Function {
  std::string name;
  llvm::object::SectionRef section;
  uint64_t address = 0;
  uint64_t size = 0;
};

std::string ErrorText(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

absl::StatusOr<std::string> DisassembleObject(const std::string& object, const ResolvedTarget& target) {
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object, "model.o"));
  if (!file) return absl::InternalError(absl::StrCat("reading the object: ", ErrorText(file.takeError())));
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) return absl::InternalError(error);
  llvm::Triple triple(target.triple);
  std::unique_ptr<llvm::MCRegisterInfo> registers(llvm_target->createMCRegInfo(target.triple));
  llvm::MCTargetOptions mc_options;
  std::unique_ptr<llvm::MCAsmInfo> asm_info(
      llvm_target->createMCAsmInfo(*registers, target.triple, mc_options));
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvm_target->createMCSubtargetInfo(target.triple, target.cpu, target.features));
  std::unique_ptr<llvm::MCInstrInfo> instructions(llvm_target->createMCInstrInfo());
  if (!registers || !asm_info || !subtarget || !instructions) {
    return absl::InternalError(absl::StrCat("no MC layer for ", target.triple));
  }
  llvm::MCContext context(triple, asm_info.get(), registers.get(), subtarget.get());
  std::unique_ptr<llvm::MCDisassembler> disassembler(
      llvm_target->createMCDisassembler(*subtarget, context));
  std::unique_ptr<llvm::MCInstPrinter> printer(llvm_target->createMCInstPrinter(
      triple, asm_info->getAssemblerDialect(), *asm_info, *instructions, *registers));
  if (!disassembler || !printer) {
    return absl::InternalError(absl::StrCat("no disassembler for ", target.triple));
  }
  std::unique_ptr<llvm::DWARFContext> dwarf = llvm::DWARFContext::create(**file);

  // Functions in section, then address order; relocations by section and offset.
  std::vector<Function> functions;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    auto type = symbol.getType();
    if (!type || *type != llvm::object::SymbolRef::ST_Function) {
      if (!type) llvm::consumeError(type.takeError());
      continue;
    }
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    auto section = symbol.getSection();
    if (!name || !address || !section || *section == (*file)->section_end()) {
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
      if (!section) llvm::consumeError(section.takeError());
      continue;
    }
    uint64_t size = llvm::object::ELFSymbolRef(symbol).getSize();
    functions.push_back({name->str(), **section, *address, size});
  }
  std::sort(functions.begin(), functions.end(), [](const Function& a, const Function& b) {
    if (a.section.getIndex() != b.section.getIndex()) return a.section.getIndex() < b.section.getIndex();
    return a.address < b.address;
  });
  std::map<uint64_t, std::map<uint64_t, std::string>> relocations;  // section -> offset -> name
  for (const llvm::object::SectionRef& section : (*file)->sections()) {
    auto target_section = section.getRelocatedSection();
    if (!target_section) {
      llvm::consumeError(target_section.takeError());
      continue;
    }
    if (*target_section == (*file)->section_end()) continue;
    for (const llvm::object::RelocationRef& relocation : section.relocations()) {
      llvm::object::symbol_iterator symbol = relocation.getSymbol();
      if (symbol == (*file)->symbol_end()) continue;
      auto name = symbol->getName();
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      std::string label = name->str();
      if (label.empty()) {  // a section symbol: name the section
        auto in = symbol->getSection();
        if (in && *in != (*file)->section_end()) {
          auto section_name = (*in)->getName();
          if (section_name) label = section_name->str();
          else llvm::consumeError(section_name.takeError());
        } else if (!in) {
          llvm::consumeError(in.takeError());
        }
      }
      relocations[(*target_section)->getIndex()][relocation.getOffset()] = label;
    }
  }

  std::string text = "\t.text\n";
  llvm::raw_string_ostream out(text);
  for (const Function& function : functions) {
    auto contents = function.section.getContents();
    if (!contents) return absl::InternalError(ErrorText(contents.takeError()));
    llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t*>(contents->data()), contents->size());
    if (function.address + function.size > bytes.size()) continue;
    const std::map<uint64_t, std::string>& section_relocations =
        relocations[function.section.getIndex()];
    out << function.name << ":\n";
    int line = -1;
    uint64_t offset = function.address;
    const uint64_t end = function.address + function.size;
    while (offset < end) {
      llvm::DILineInfo info = dwarf->getLineInfoForAddress(
          {offset, function.section.getIndex()},
          llvm::DILineInfoSpecifier(llvm::DILineInfoSpecifier::FileLineInfoKind::RawValue));
      int here = static_cast<int>(info.Line);
      if (here != line) {
        out << "\t.loc\t1 " << here << " 0\n";
        line = here;
      }
      llvm::MCInst instruction;
      uint64_t size = 0;
      auto status = disassembler->getInstruction(instruction, size, bytes.slice(offset, end - offset),
                                                  offset, llvm::nulls());
      if (status != llvm::MCDisassembler::Success || size == 0) {
        out << "\t.byte\t" << static_cast<unsigned>(bytes[offset]) << "\n";
        offset += 1;
        continue;
      }
      std::string printed;
      llvm::raw_string_ostream printed_stream(printed);
      printer->printInst(&instruction, offset, "", *subtarget, printed_stream);
      printed_stream.flush();
      if (printed.empty() || printed[0] != '\t') printed.insert(0, "\t");
      // What a call or an address refers to: the relocation inside the instruction's bytes.
      auto reference = section_relocations.lower_bound(offset);
      if (reference != section_relocations.end() && reference->first < offset + size) {
        absl::StrAppend(&printed, " <", reference->second, ">");
      }
      out << printed << "\n";
      offset += size;
    }
  }
  out.flush();
  return text;
}

}  // namespace kiln::codegen
