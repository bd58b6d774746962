/* callchains.h - every stack of a database as a list of functions, for
 * output that prints whole stacks (folded stacks, top stacks). A function
 * is a distinct (name, module, kind) of the frames table; inlined frames
 * are functions of their own. */
#ifndef ANALYZE_CALLCHAINS_H
#define ANALYZE_CALLCHAINS_H

#include <stdint.h>
#include <sqlite3.h>

#include "util/hashmap.h"

struct function {
	char *name;               /* never empty: unresolved ones are module+0xoff */
	char *module;
	int   is_kernel;
};

struct callchains {
	struct function *functions;
	uint32_t nfunctions;
	uint32_t *chain_fns;      /* all chains' function indices, innermost first */
	uint64_t nchain_fns;
	struct hmap by_stack;     /* stack id -> (offset << 20) | length */
};

/* Loads every stack of db. 0 or -1 (reported). */
int callchains_load(struct callchains *cc, sqlite3 *db);
void callchains_free(struct callchains *cc);

/* The functions of a stack, innermost first; *len = 0 for an unknown or
 * empty stack (including SQL NULL, passed as a negative id). */
const uint32_t *callchains_get(const struct callchains *cc, int64_t stack_id,
			       uint32_t *len);

#endif /* ANALYZE_CALLCHAINS_H */
