/* syscall_lookup.c - looking up the generated system call table (see
 * syscall_table.h). */
#include <string.h>

#include "syscall_table.h"

const char *syscall_table_name(unsigned nr)
{
	return nr < SYSCALL_NR_MAX ? syscall_names[nr] : NULL;
}

int syscall_table_nr(const char *name, size_t len)
{
	for (int nr = 0; nr < SYSCALL_NR_MAX; nr++) {
		const char *s = syscall_names[nr];

		if (s && strlen(s) == len && strncmp(s, name, len) == 0)
			return nr;
	}
	return -1;
}
