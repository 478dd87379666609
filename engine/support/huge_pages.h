// Large buffers on transparent huge pages. Each 4 KiB page a buffer touches first is a page
// fault, and on a virtual machine a fault costs microseconds: ResNet-50's 100 MB of weights,
// written once when folded, once when packed and once into the object, were over a third of
// its compile. Where the kernel offers huge pages on request (transparent_hugepage=madvise,
// Debian's default), a 2 MiB page takes one fault for 512.
#pragma once

#include <cstddef>
#include <string>

namespace kiln {

// Asks for huge pages under [data, data + bytes): the 2 MiB-aligned part of it, if any, before
// it is first written. A hint: nothing changes where the kernel declines.
void AdviseHugePages(const void* data, size_t bytes);

// `bytes` zero bytes, on huge pages when large.
std::string ZeroedBytes(size_t bytes);

}  // namespace kiln
