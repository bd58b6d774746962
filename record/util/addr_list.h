/* addr_list.h - a growable list of addresses, sorted and deduplicated on
 * demand (hit addresses of a module or of the kernel). */
#ifndef RECORD_ADDR_LIST_H
#define RECORD_ADDR_LIST_H

#include <stddef.h>
#include <stdint.h>

struct addr_list {
	uint64_t *v;
	size_t n;
	size_t cap;
};

int addr_list_add(struct addr_list *l, uint64_t addr); /* 0 or -ENOMEM */
void addr_list_sort_unique(struct addr_list *l);
void addr_list_free(struct addr_list *l);

#endif /* RECORD_ADDR_LIST_H */
