/* callchains.c - stacks as function lists, loaded from the database
 * (see callchains.h). */
#include <stdlib.h>
#include <string.h>

#include "callchains.h"
#include "db/db.h"

#define CHAIN_LEN_BITS 20
#define CHAIN_LEN_MAX  ((1u << CHAIN_LEN_BITS) - 1)

static char *dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *text = sqlite3_column_text(st, col);

	return strdup(text ? (const char *)text : "");
}

/* Reads the distinct functions and maps every frame id to one. */
static int load_functions(struct callchains *cc, sqlite3 *db, struct hmap *fn_of_frame)
{
	sqlite3_stmt *st = db_prepare(db,
		"SELECT frame_id, name, module, kind = 'kernel',"
		" dense_rank() OVER (ORDER BY name, module, kind) - 1 AS fn"
		" FROM frames ORDER BY fn");
	uint32_t cap = 0;
	int rc = 0;

	if (!st)
		return -1;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		int64_t frame_id = sqlite3_column_int64(st, 0);
		uint32_t fn = (uint32_t)sqlite3_column_int64(st, 4);

		if (fn == cc->nfunctions) {
			if (cc->nfunctions == cap) {
				cap = cap ? cap * 2 : 1024;
				struct function *grown = realloc(cc->functions, cap * sizeof(*grown));
				if (!grown) {
					rc = -1;
					break;
				}
				cc->functions = grown;
			}
			struct function *f = &cc->functions[cc->nfunctions++];
			f->name = dup_column(st, 1);
			f->module = dup_column(st, 2);
			f->is_kernel = sqlite3_column_int(st, 3);
			if (!f->name || !f->module)
				rc = -1;
		}
		if (!hmap_upsert(fn_of_frame, (uint64_t)frame_id, 0, fn, NULL))
			rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

static int append_fn(struct callchains *cc, uint64_t *cap, uint32_t fn)
{
	if (cc->nchain_fns == *cap) {
		*cap = *cap ? *cap * 2 : 4096;
		uint32_t *grown = realloc(cc->chain_fns, *cap * sizeof(*grown));
		if (!grown)
			return -1;
		cc->chain_fns = grown;
	}
	cc->chain_fns[cc->nchain_fns++] = fn;
	return 0;
}

static int close_chain(struct callchains *cc, int64_t stack_id, uint64_t start)
{
	uint64_t len = cc->nchain_fns - start;

	if (len > CHAIN_LEN_MAX)
		len = CHAIN_LEN_MAX;
	return hmap_upsert(&cc->by_stack, (uint64_t)stack_id, 0,
			   (start << CHAIN_LEN_BITS) | len, NULL) ? 0 : -1;
}

static int load_chains(struct callchains *cc, sqlite3 *db, const struct hmap *fn_of_frame)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT stack_id, frame_id FROM stack_frames"
				      " ORDER BY stack_id, position");
	int64_t current = -1;
	uint64_t start = 0, cap = 0;
	int rc = 0;

	if (!st)
		return -1;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		int64_t stack_id = sqlite3_column_int64(st, 0);
		const uint64_t *fn = hmap_find(fn_of_frame,
					       (uint64_t)sqlite3_column_int64(st, 1), 0);
		if (stack_id != current) {
			if (current >= 0)
				rc = close_chain(cc, current, start);
			current = stack_id;
			start = cc->nchain_fns;
		}
		if (rc == 0 && fn)
			rc = append_fn(cc, &cap, (uint32_t)*fn);
	}
	if (rc == 0 && current >= 0)
		rc = close_chain(cc, current, start);
	sqlite3_finalize(st);
	return rc;
}

int callchains_load(struct callchains *cc, sqlite3 *db)
{
	struct hmap fn_of_frame;
	int rc;

	memset(cc, 0, sizeof(*cc));
	hmap_init(&cc->by_stack);
	hmap_init(&fn_of_frame);
	rc = load_functions(cc, db, &fn_of_frame);
	if (rc == 0)
		rc = load_chains(cc, db, &fn_of_frame);
	hmap_free(&fn_of_frame);
	return rc;
}

void callchains_free(struct callchains *cc)
{
	for (uint32_t i = 0; i < cc->nfunctions; i++) {
		free(cc->functions[i].name);
		free(cc->functions[i].module);
	}
	free(cc->functions);
	free(cc->chain_fns);
	hmap_free(&cc->by_stack);
	memset(cc, 0, sizeof(*cc));
}

const uint32_t *callchains_get(const struct callchains *cc, int64_t stack_id,
			       uint32_t *len)
{
	const uint64_t *slot = stack_id >= 0 ?
		hmap_find(&cc->by_stack, (uint64_t)stack_id, 0) : NULL;

	if (!slot) {
		*len = 0;
		return NULL;
	}
	*len = (uint32_t)(*slot & CHAIN_LEN_MAX);
	return cc->chain_fns + (*slot >> CHAIN_LEN_BITS);
}
