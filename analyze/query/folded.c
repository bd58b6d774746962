/* folded.c - Brendan Gregg's folded stack format, one line per distinct
 * stack: "comm;outermost;...;innermost count". Kernel frames follow the
 * user frames with a "_[k]" suffix (flamegraph.pl colours them); inlined
 * functions are frames of their own. Lines are sorted bytewise, identical
 * lines merged, so the output is deterministic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"
#include "folded.h"
#include "perfcap_format.h"

struct folded_lines {
	struct folded_stack *lines;
	size_t len;
	size_t cap;
};

/* How each function appears in a line: its name with ';' (the separator)
 * and control characters (a newline would split the line) made harmless,
 * and "_[k]" appended for kernel functions. */
struct tokens {
	char **text;
	size_t *len;
	uint32_t n;
};

static char *make_token(const char *name, int is_kernel)
{
	size_t len = strlen(name);
	char *token = malloc(len + sizeof("_[k]"));

	if (!token)
		return NULL;
	for (size_t i = 0; i < len; i++)
		token[i] = name[i] == ';' ? ':' :
			   ((unsigned char)name[i] < 0x20 || name[i] == 0x7f) ? '?' : name[i];
	strcpy(token + len, is_kernel ? "_[k]" : "");
	return token;
}

static int tokens_make(struct tokens *t, const struct callchains *cc)
{
	t->n = cc->nfunctions;
	t->text = calloc((size_t)t->n + 1, sizeof(*t->text));
	t->len = calloc((size_t)t->n + 1, sizeof(*t->len));
	if (!t->text || !t->len)
		return -1;
	for (uint32_t i = 0; i < t->n; i++) {
		t->text[i] = make_token(cc->functions[i].name, cc->functions[i].is_kernel);
		if (!t->text[i])
			return -1;
		t->len[i] = strlen(t->text[i]);
	}
	return 0;
}

static void tokens_free(struct tokens *t)
{
	for (uint32_t i = 0; t->text && i < t->n; i++)
		free(t->text[i]);
	free(t->text);
	free(t->len);
	memset(t, 0, sizeof(*t));
}

static int append_token(struct pc_buf *b, const char *text, size_t len)
{
	if (b->len > 0 && pc_buf_append(b, ";", 1) < 0)
		return -1;
	return pc_buf_append(b, text, len);
}

/* Appends a chain root first (chains are stored innermost first). */
static int append_chain(struct pc_buf *b, const struct tokens *t, const uint32_t *fns,
			uint32_t len)
{
	for (uint32_t i = len; i > 0; i--)
		if (append_token(b, t->text[fns[i - 1]], t->len[fns[i - 1]]) < 0)
			return -1;
	return 0;
}

static int build_line(struct pc_buf *b, const struct callchains *cc, const struct tokens *t,
		      const struct names *names, const struct selected_group *g)
{
	const char *comm = names_thread(names, g->pid, g->tid);
	char comm_token[64];
	uint32_t ulen, klen;
	const uint32_t *ufns = callchains_get(cc, g->ustack, &ulen);
	const uint32_t *kfns = callchains_get(cc, g->kstack, &klen);

	if (comm)
		snprintf(comm_token, sizeof(comm_token), "%s", comm);
	else
		snprintf(comm_token, sizeof(comm_token), "[pid %u]", g->pid);
	for (char *p = comm_token; *p; p++)
		if (*p == ';')
			*p = ':';
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?'; /* one stack per line, whatever the database holds */
	pc_buf_reset(b);
	if (append_token(b, comm_token, strlen(comm_token)) < 0 ||
	    append_chain(b, t, ufns, ulen) < 0 || append_chain(b, t, kfns, klen) < 0)
		return -1;
	if (ulen == 0 && klen == 0 && append_token(b, "[no stack]", 10) < 0)
		return -1;
	return pc_buf_append(b, "", 1);
}

static int add_line(struct folded_lines *out, const char *text, uint64_t count)
{
	if (out->len == out->cap) {
		size_t new_cap = out->cap ? out->cap * 2 : 1024;
		struct folded_stack *grown = realloc(out->lines, new_cap * sizeof(*grown));
		if (!grown)
			return -1;
		out->lines = grown;
		out->cap = new_cap;
	}
	out->lines[out->len].text = strdup(text);
	if (!out->lines[out->len].text)
		return -1;
	out->lines[out->len++].count = count;
	return 0;
}

static int compare_lines(const void *a, const void *b)
{
	return strcmp(((const struct folded_stack *)a)->text,
		      ((const struct folded_stack *)b)->text);
}

/* Merges identical adjacent lines of the sorted list in place. */
static void merge_sorted(struct folded_lines *all)
{
	size_t kept = 0;

	for (size_t i = 0; i < all->len; i++) {
		if (kept > 0 && strcmp(all->lines[kept - 1].text, all->lines[i].text) == 0) {
			all->lines[kept - 1].count += all->lines[i].count;
			free(all->lines[i].text);
			continue;
		}
		all->lines[kept++] = all->lines[i];
	}
	all->len = kept;
}

static int collect_lines(const struct selection *sel, const struct callchains *cc,
			 const struct names *names, struct folded_lines *all)
{
	struct pc_buf line = { 0 };
	struct tokens tokens = { 0 };
	int rc = tokens_make(&tokens, cc);

	for (size_t i = 0; rc == 0 && i < sel->len; i++) {
		rc = build_line(&line, cc, &tokens, names, &sel->groups[i]);
		if (rc == 0)
			rc = add_line(all, (const char *)line.data, sel->groups[i].count);
	}
	pc_buf_free(&line);
	tokens_free(&tokens);
	return rc;
}

int folded_stacks_build(const struct selection *sel, const struct callchains *cc,
			const struct names *names, struct folded_stack **lines, size_t *n)
{
	struct folded_lines all = { 0 };
	int rc = collect_lines(sel, cc, names, &all);

	if (rc == 0) {
		if (all.len > 0) /* no samples: lines is NULL, which qsort may not get */
			qsort(all.lines, all.len, sizeof(*all.lines), compare_lines);
		merge_sorted(&all);
		*lines = all.lines;
		*n = all.len;
		return 0;
	}
	folded_stacks_free(all.lines, all.len);
	fprintf(stderr, "perfcap-analyze: out of memory building folded stacks\n");
	return -1;
}

void folded_stacks_free(struct folded_stack *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
}

int folded_stacks_load(sqlite3 *db, const struct report_options *opts,
		       struct folded_stack **lines, size_t *n)
{
	struct report_scope scope;
	struct selection sel;
	struct callchains cc;
	struct names names;
	int rc = -1;

	*lines = NULL;
	*n = 0;
	memset(&cc, 0, sizeof(cc));
	memset(&names, 0, sizeof(names));
	if (report_scope_resolve(db, opts, &scope) < 0 || selection_load(db, &scope, &sel) < 0)
		return -1;
	if (callchains_load(&cc, db) == 0 && names_load(&names, db) == 0)
		rc = folded_stacks_build(&sel, &cc, &names, lines, n);
	names_free(&names);
	callchains_free(&cc);
	selection_free(&sel);
	return rc;
}
