// Data layouts written as strings, TVM's notation: upper-case letters are the
// primal axes ("NCHW"), a number and a lower-case letter a sub-axis that
// splits its primal axis into blocks of that many elements ("NCHW8c": C is
// split into C/8 blocks, the 8 channels of a block innermost; "OIHW8i8o" a
// convolution weight blocked on both channel axes). The primal axis then holds
// the number of blocks. layout_transform maps a tensor between two layouts of
// the same primal axes; the blocked convolution (nn.conv2d_nchwc) reads them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

class Layout {
 public:
  struct Axis {
    char name;       // 'N', 'C', ... for a primal axis; 'c', ... for a sub-axis
    int64_t factor;  // the block size of a sub-axis; 0 for a primal axis
  };

  // The layout `text` names, or an InvalidArgument error saying what is wrong
  // ("NCHW8c", "OIHW8i8o"; every primal axis once, every sub-axis after a
  // number > 0 and at most once, its primal axis present).
  static absl::StatusOr<Layout> Parse(std::string_view text);

  const std::vector<Axis>& axes() const { return axes_; }
  size_t rank() const { return axes_.size(); }
  const std::string& name() const { return name_; }
  // The position of axis `name` (primal or sub), or -1.
  int Find(char name) const;
  // The block size of `primal`'s sub-axis, or 1 when it is not split.
  int64_t Factor(char primal) const;

 private:
  std::vector<Axis> axes_;
  std::string name_;
};

// The shape a tensor of shape `shape` in layout `from` has in layout `to`:
// the primal axes must be the same, and every extent split by `to` must be a
// multiple of its block size (no implicit padding).
absl::StatusOr<std::vector<int64_t>> TransformShape(const Layout& from, const Layout& to,
                                                    const std::vector<int64_t>& shape);

// For an index of the result of TransformShape, the index into the source:
// `to_index` holds one integer per axis of `to`. Templated over the index type
// so the compute definition (loop expressions) and tests (integers) share it.
template <typename Index, typename DivFn, typename ModFn>
std::vector<Index> SourceIndex(const Layout& from, const Layout& to,
                               const std::vector<Index>& to_index, DivFn div, ModFn mod) {
  std::vector<Index> from_index(from.rank());
  for (size_t d = 0; d < to.rank(); ++d) {
    const Layout::Axis& axis = to.axes()[d];
    if (axis.factor != 0) continue;  // folded in with its primal axis
    // The coordinate along the unsplit primal axis.
    Index coordinate = to_index[d];
    int inner = to.Find(static_cast<char>(axis.name - 'A' + 'a'));
    if (inner >= 0) coordinate = coordinate * to.axes()[inner].factor + to_index[inner];
    int from_outer = from.Find(axis.name);
    int from_inner = from.Find(static_cast<char>(axis.name - 'A' + 'a'));
    if (from_inner < 0) {
      from_index[from_outer] = coordinate;
    } else {
      int64_t factor = from.axes()[from_inner].factor;
      from_index[from_outer] = div(coordinate, factor);
      from_index[from_inner] = mod(coordinate, factor);
    }
  }
  return from_index;
}

}  // namespace kiln
