/* synthetic.h - small modules built in memory, for tests that need exact
 * symbol layouts (kernel modules, hostile records). */
#ifndef SYMBOLIZE_TEST_SYNTHETIC_H
#define SYMBOLIZE_TEST_SYNTHETIC_H

#include "common/elf_module.h"

#define KBASE 0xffffffff81000000ull

/* A PC_MODULE_KERNEL module: k_first [KBASE, +0x100), k_mid at +0x100
 * without a size, k_last [+0x200, +0x250). Static storage: do not free. */
void synthetic_kernel_module(struct pc_elf_module *m);

/* An ELF-kind module with 2 segments, 3 symbols, a path and a build-id. */
void synthetic_elf_module(struct pc_elf_module *m);

#endif
