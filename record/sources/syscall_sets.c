/* syscall_sets.c - the syscall sets of the sources that share the syscall
 * BPF program, parsing --syscalls, and the union the kernel gets (see
 * syscall_sets.h for the ownership rule). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "syscall_sets.h"
#include "common/event_sources.h"
#include "common/syscall_table.h"
#include "common/units.h"
#include "util/util.h"

/* Ownership order: the first selected source holding a number owns it. */
static const struct syscall_source_set fixed_sets[] = {
	{ "mux", "epoll_wait,epoll_pwait,epoll_pwait2,poll,ppoll,select,pselect6", 0 },
	{ "lock", "futex", PERFCAP_SYSCALL_F_STACK },
	{ "net", "accept,accept4,connect,read,write,readv,writev,recvfrom,sendto,"
		 "recvmsg,sendmsg,recvmmsg,sendmmsg,sendfile,close,shutdown", 0 },
	{ "mem", "mmap,munmap,mprotect,brk", 0 },
};

static const struct syscall_source_set *syscall_source_sets(size_t *n)
{
	*n = sizeof(fixed_sets) / sizeof(fixed_sets[0]);
	return fixed_sets;
}

/* ---- names ---------------------------------------------------------------- */

const char *syscall_name(uint32_t nr, char *buf, size_t len)
{
	if (syscall_table_name(nr))
		return syscall_table_name(nr);
	snprintf(buf, len, "sys_%u", nr);
	return buf;
}

int syscall_number(const char *s)
{
	uint64_t nr;

	if (parse_u64_in_range(s, 0, PERFCAP_SYSCALL_NR_MAX - 1, &nr))
		return (int)nr;
	if (!strncmp(s, "sys_", 4) && parse_u64_in_range(s + 4, 0, PERFCAP_SYSCALL_NR_MAX - 1, &nr))
		return (int)nr;
	return syscall_table_nr(s, strlen(s));
}

/* ---- sets ----------------------------------------------------------------- */

bool syscall_set_has(const struct syscall_set *s, uint32_t nr)
{
	return nr < PERFCAP_SYSCALL_NR_MAX && (s->bits[nr / 64] >> (nr % 64) & 1);
}

void syscall_set_add(struct syscall_set *s, uint32_t nr)
{
	if (nr < PERFCAP_SYSCALL_NR_MAX)
		s->bits[nr / 64] |= 1ull << (nr % 64);
}

/* Adds one name of a list; -EINVAL with why on an unknown one. */
static int add_name(struct syscall_set *out, const char *name, char *why, size_t len)
{
	int nr;

	if (!*name) {
		snprintf(why, len, "empty system call name in the list");
		return -EINVAL;
	}
	nr = syscall_number(name);
	if (nr < 0) {
		snprintf(why, len, "unknown system call '%s' (x86_64 names as in "
			 "<asm/unistd_64.h>, e.g. read,futex, or numbers 0-%d)",
			 name, PERFCAP_SYSCALL_NR_MAX - 1);
		return -EINVAL;
	}
	syscall_set_add(out, (uint32_t)nr);
	return 0;
}

int syscall_set_parse(const char *list, struct syscall_set *out, char *why, size_t len)
{
	char *copy = strdup(list ? list : ""), *rest = copy, *tok;
	int err = 0;

	if (!copy) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	memset(out, 0, sizeof(*out));
	while (!err && (tok = strsep(&rest, ",")) != NULL) /* empty names too */
		err = add_name(out, tok, why, len);
	free(copy);
	return err;
}

char *syscall_set_format(const struct syscall_set *s)
{
	struct text t = { 0 };
	char buf[24];
	int err = text_append_str(&t, "");

	for (uint32_t nr = 0; nr < PERFCAP_SYSCALL_NR_MAX && !err; nr++) {
		if (!syscall_set_has(s, nr))
			continue;
		if (t.len)
			err = text_append_str(&t, ",");
		err = err ? err : text_append_str(&t, syscall_name(nr, buf, sizeof(buf)));
	}
	if (err) {
		text_free(&t);
		return NULL;
	}
	return t.s;
}

/* ---- the union ------------------------------------------------------------ */

static void parse_fixed(const struct syscall_source_set *f, struct syscall_set *out)
{
	char why[160];

	if (syscall_set_parse(f->members, out, why, sizeof(why))) /* a bug in fixed_sets[] */
		error_line("internal: syscall set of %s: %s", f->source, why);
}

bool syscall_set_of(const char *name, const struct syscall_set *user_set,
		    struct syscall_set *out)
{
	size_t n;
	const struct syscall_source_set *f = syscall_source_sets(&n);

	if (!strcmp(name, "syscall")) {
		*out = *user_set;
		return true;
	}
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(f[i].source, name)) {
			parse_fixed(&f[i], out);
			return true;
		}
	}
	return false;
}

/* Adds set s of source id to sel[]: owns what nobody owns yet. */
static void add_to_table(const struct syscall_set *s, int id, uint8_t flags,
			 struct perfcap_syscall_sel sel[PERFCAP_SYSCALL_NR_MAX])
{
	for (uint32_t nr = 0; nr < PERFCAP_SYSCALL_NR_MAX; nr++) {
		if (!syscall_set_has(s, nr))
			continue;
		if (!sel[nr].source)
			sel[nr].source = (uint8_t)id;
		sel[nr].flags |= flags;
	}
}

void syscall_sets_build(const bool selected[PERFCAP_SRC_MAX], const struct syscall_set *user_set,
			struct perfcap_syscall_sel sel[PERFCAP_SYSCALL_NR_MAX])
{
	size_t n;
	const struct syscall_source_set *f = syscall_source_sets(&n);
	struct syscall_set s;

	memset(sel, 0, PERFCAP_SYSCALL_NR_MAX * sizeof(*sel));
	for (size_t i = 0; i < n; i++) {
		int id = event_source_id(f[i].source);

		if (id <= 0 || id >= PERFCAP_SRC_MAX || !selected[id])
			continue;
		parse_fixed(&f[i], &s);
		add_to_table(&s, id, f[i].flags, sel);
	}
	if (selected[PERFCAP_SRC_SYSCALL])
		add_to_table(user_set, PERFCAP_SRC_SYSCALL, 0, sel);
}

bool syscall_sets_wanted(const bool selected[PERFCAP_SRC_MAX])
{
	size_t n;
	const struct syscall_source_set *f = syscall_source_sets(&n);

	if (selected[PERFCAP_SRC_SYSCALL])
		return true;
	for (size_t i = 0; i < n; i++) {
		int id = event_source_id(f[i].source);

		if (id > 0 && id < PERFCAP_SRC_MAX && selected[id])
			return true;
	}
	return false;
}
