// Layout strings: parsing and the shape of a layout change.
#include "engine/op/layout.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace kiln {

absl::StatusOr<Layout> Layout::Parse(std::string_view text) {
  Layout layout;
  layout.name_ = std::string(text);
  // Bounded by the text, which an attribute holds: at most 26 primal axes.
  int64_t factor = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      if (factor > (int64_t{1} << 20)) {
        return absl::InvalidArgumentError(
            absl::StrCat("layout \"", layout.name_, "\": block size too large"));
      }
      factor = factor * 10 + (ch - '0');
      continue;
    }
    bool upper = ch >= 'A' && ch <= 'Z', lower = ch >= 'a' && ch <= 'z';
    if (!upper && !lower) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout \"", layout.name_, "\": '", std::string(1, ch), "' is not an axis letter"));
    }
    if (upper && factor != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layout \"", layout.name_, "\": primal axis '", std::string(1, ch), "' has a block size"));
    }
    if (lower && factor == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layout \"", layout.name_, "\": sub-axis '", std::string(1, ch), "' needs a block size > 0"));
    }
    if (layout.Find(ch) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout \"", layout.name_, "\": axis '", std::string(1, ch), "' appears twice"));
    }
    layout.axes_.push_back({ch, lower ? factor : 0});
    factor = 0;
  }
  if (factor != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout \"", layout.name_, "\": ends in a block size without its axis"));
  }
  for (const Axis& axis : layout.axes_) {
    if (axis.factor != 0 && layout.Find(static_cast<char>(axis.name - 'a' + 'A')) < 0) {
      return absl::InvalidArgumentError(absl::StrCat("layout \"", layout.name_, "\": sub-axis '",
                                                     std::string(1, axis.name),
                                                     "' without its primal axis"));
    }
  }
  return layout;
}

int Layout::Find(char name) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int64_t Layout::Factor(char primal) const {
  int inner = Find(static_cast<char>(primal - 'A' + 'a'));
  return inner < 0 ? 1 : axes_[inner].factor;
}

absl::StatusOr<std::vector<int64_t>> TransformShape(const Layout& from, const Layout& to,
                                                    const std::vector<int64_t>& shape) {
  if (shape.size() != from.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("a rank-", shape.size(),
                                                   " tensor is not in layout ", from.name(),
                                                   " (rank ", from.rank(), ")"));
  }
  std::vector<int64_t> result(to.rank());
  int from_primal = 0, to_primal = 0;
  for (const Layout::Axis& axis : from.axes()) from_primal += axis.factor == 0;
  for (size_t d = 0; d < to.rank(); ++d) {
    const Layout::Axis& axis = to.axes()[d];
    if (axis.factor != 0) {
      result[d] = axis.factor;
      continue;
    }
    ++to_primal;
    int outer = from.Find(axis.name);
    if (outer < 0) {
      return absl::InvalidArgumentError(absl::StrCat("layouts ", from.name(), " and ", to.name(),
                                                     " differ in axis '",
                                                     std::string(1, axis.name), "'"));
    }
    int64_t from_factor = from.Factor(axis.name);
    int inner = from.Find(static_cast<char>(axis.name - 'A' + 'a'));
    if (inner >= 0 && shape[inner] != from_factor) {
      return absl::InvalidArgumentError(absl::StrCat("axis '", std::string(1, from.axes()[inner].name),
                                                     "' of layout ", from.name(), " has extent ",
                                                     shape[inner], ", expected ", from_factor));
    }
    int64_t extent = shape[outer] * from_factor;
    int64_t to_factor = to.Factor(axis.name);
    if (extent % to_factor != 0) {
      return absl::InvalidArgumentError(absl::StrCat("axis '", std::string(1, axis.name),
                                                     "' of extent ", extent,
                                                     " is not a multiple of the block size ",
                                                     to_factor, " of layout ", to.name()));
    }
    result[d] = extent / to_factor;
  }
  if (from_primal != to_primal) {
    return absl::InvalidArgumentError(absl::StrCat("layouts ", from.name(), " and ", to.name(),
                                                   " have different primal axes"));
  }
  return result;
}

}  // namespace kiln
