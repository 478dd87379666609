// Operators on string tensors (ONNX StringNormalizer's parts; casts to and from strings are the
// `cast` op):
//   string.change_case(x, case="upper"|"lower") -> string: ASCII letters changed;
//   string.in_set(x, words=[...]) -> bool: whether each element is one of the words (exactly;
//     StringNormalizer lowercases both sides first when it is not case-sensitive);
//   string.full_like(x, value) -> string: x's shape, every element `value` (StringNormalizer's
//     [""] when it removes every word).
// change_case and full_like are elementwise, so they fuse with casts and the compaction around
// them. in_set compares each element with every word: it is opaque, so its input is a buffer
// it loads from, never a producer (a cast, a case change) inlined and so run once per word.
#include "absl/strings/str_cat.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

// Words compared per element: each is a runtime call, and a hostile model's list must not
// grow the kernel (or the compile) without bound.
constexpr int64_t kMaxWords = 4096;
constexpr int64_t kMaxWordBytes = 1 << 20;

absl::StatusOr<const TensorTypeNode*> StringArg(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* x, TensorArg(in, 0));
  if (x->dtype != DataType::kString) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 0 has dtype ", DataTypeName(x->dtype), ", expected string"));
  }
  return x;
}

std::string CheckWords(const AttrValue& value) {
  if (!value.is<AttrValue::Array>()) return "words must be an array of strings";
  const auto& words = value.get<AttrValue::Array>();
  if (static_cast<int64_t>(words.size()) > kMaxWords) {
    return absl::StrCat(words.size(), " words, more than the limit of ", kMaxWords);
  }
  int64_t bytes = 0;
  for (const AttrValue& word : words) {
    if (!word.is<std::string>()) return "words must be an array of strings";
    if (word.get<std::string>().find('\0') != std::string::npos) {
      return "a word holds a NUL byte (string elements are NUL-terminated)";
    }
    bytes += static_cast<int64_t>(word.get<std::string>().size());
  }
  if (bytes > kMaxWordBytes) {
    return absl::StrCat("the words hold ", bytes, " bytes, more than the limit of ",
                        kMaxWordBytes);
  }
  return "";
}

}  // namespace

void RegisterStringOps(OpRegistry& registry) {
  {
    OpEntry entry;
    entry.name = "string.change_case";
    entry.summary = "each string with its ASCII letters made upper or lower case";
    entry.attrs = {{"case", AttrKind::kString, std::nullopt, "\"upper\" or \"lower\"",
                    [](const AttrValue& value) -> std::string {
                      const std::string& text = value.get<std::string>();
                      return text == "upper" || text == "lower" ? "" : "must be upper or lower";
                    }}};
    entry.pattern = OpPattern::kElementwise;
    entry.relation = [](const TypeRelationInput& in) -> absl::StatusOr<Type> {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* x, StringArg(in));
      return Type(MakeTensorType(x->shape, DataType::kString));
    };
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "string.full_like";
    entry.summary = "a string tensor of x's shape holding value everywhere";
    entry.attrs = {{"value", AttrKind::kString, AttrValue(""), "the string",
                    [](const AttrValue& value) -> std::string {
                      const std::string& text = value.get<std::string>();
                      if (text.find('\0') != std::string::npos) return "holds a NUL byte";
                      return text.size() > static_cast<size_t>(kMaxWordBytes) ? "is too long" : "";
                    }}};
    entry.pattern = OpPattern::kElementwise;
    entry.relation = [](const TypeRelationInput& in) -> absl::StatusOr<Type> {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* x, TensorArg(in, 0));
      return Type(MakeTensorType(x->shape, DataType::kString));
    };
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "string.in_set";
    entry.summary = "whether each string is one of the words";
    entry.attrs = {{"words", AttrKind::kAny, std::nullopt, "the strings to look for", CheckWords}};
    entry.pattern = OpPattern::kOpaque;
    entry.relation = [](const TypeRelationInput& in) -> absl::StatusOr<Type> {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* x, StringArg(in));
      return Type(MakeTensorType(x->shape, DataType::kBool));
    };
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
