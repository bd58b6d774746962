/* kallsyms.h - the running kernel's function symbols, from /proc/kallsyms
 * (text symbols t/T/w/W, including those of loaded modules), as a
 * pc_elf_module of kind PC_MODULE_KERNEL. */
#ifndef RECORD_KALLSYMS_H
#define RECORD_KALLSYMS_H

#include <stdbool.h>

#include "common/elf_module.h"

/* Opens /proc/kallsyms now, while the recorder may still see addresses
 * (CAP_SYSLOG); kallsyms_load reads this file later. */
void kallsyms_preopen(void);

/* Fills m (free with pc_elf_module_free). Sets *hidden when kallsyms shows
 * only zero addresses (kernel.kptr_restrict): m then has no symbols.
 * Returns 0 or -errno. */
int kallsyms_load(struct pc_elf_module *m, bool *hidden);

#endif /* RECORD_KALLSYMS_H */
