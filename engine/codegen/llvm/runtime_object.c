/* libkiln_rt as one position-independent relocatable object, embedded in Kiln's binaries so a
 * shared-library artifact can carry the runtime inside it (shared_library.cc). The bytes are
 * those of kiln_rt_relocatable.o, built by engine/CMakeLists.txt. */
__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    ".globl kiln_runtime_object\n"
    "kiln_runtime_object:\n"
    ".incbin \"" KILN_RT_RELOCATABLE "\"\n"
    ".globl kiln_runtime_object_end\n"
    "kiln_runtime_object_end:\n"
    ".previous\n");
