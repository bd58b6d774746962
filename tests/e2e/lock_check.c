/* lock_check.c - reads the lock and mem sources' records of a capture
 * through the format library, for their end-to-end tests (the analyzer
 * will take these checks over):
 *
 *   lock_check mutexes FILE      per mutex and waiting thread, one line:
 *                                0xADDR tid waits wait_ns
 *   lock_check locks FILE        kernel lock contention, one line:
 *                                records N total_ns T locks L with_kstack K
 *   lock_check faults FILE       per thread: tid records weight_sum
 *   lock_check maps FILE TEXT    MAP records whose path contains TEXT:
 *                                pid start-end path, one line each; exit 1
 *                                when there is none
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfcap_format.h"

#define MAX_ROWS 4096

/* A sum keyed by (key, tid). */
struct row {
	uint64_t key;
	uint32_t tid;
	uint64_t n, sum;
};

static struct row rows[MAX_ROWS];
static size_t nrows;

static void add_row(uint64_t key, uint32_t tid, uint64_t value)
{
	size_t i;

	for (i = 0; i < nrows; i++) {
		if (rows[i].key == key && rows[i].tid == tid)
			break;
	}
	if (i == nrows) {
		if (nrows == MAX_ROWS)
			return;
		rows[nrows++] = (struct row){ .key = key, .tid = tid };
	}
	rows[i].n++;
	rows[i].sum += value;
}

typedef void (*record_fn)(const struct pc_rec *rec, const char *arg);

/* Calls fn for each record of the capture's record chunks. */
static int for_each_record(const char *path, record_fn fn, const char *arg)
{
	struct pc_reader *r;
	struct pc_chunk c;
	char err[256];

	if (pc_reader_open(&r, path, err, sizeof(err))) {
		fprintf(stderr, "lock_check: %s: %s\n", path, err);
		return 2;
	}
	while (pc_reader_next(r, &c) == 1) {
		struct pc_rec_iter it;
		const struct pc_rec *rec;

		if (c.hdr.type != PC_CHUNK_EVENTS && c.hdr.type != PC_CHUNK_PROCS)
			continue;
		pc_rec_iter_init(&it, c.data, c.size);
		while (pc_rec_next(&it, &rec) == 1)
			fn(rec, arg);
	}
	pc_reader_close(r);
	return 0;
}

static void on_mutex(const struct pc_rec *rec, const char *arg)
{
	struct pc_rec_mutex m;
	size_t tail;

	(void)arg;
	if (rec->type != PC_REC_MUTEX)
		return;
	pc_rec_copy(rec, &m, sizeof(m), &tail);
	add_row(m.addr, m.tid, m.duration);
}

static uint64_t locks_n, locks_ns, locks_kstack;

static void on_lock(const struct pc_rec *rec, const char *arg)
{
	struct pc_rec_lock l;
	size_t tail;

	(void)arg;
	if (rec->type != PC_REC_LOCK)
		return;
	pc_rec_copy(rec, &l, sizeof(l), &tail);
	locks_n++;
	locks_ns += l.duration;
	locks_kstack += l.kstack != PC_STACK_NONE;
	add_row(l.lock, 0, l.duration);
}

static void on_fault(const struct pc_rec *rec, const char *arg)
{
	struct pc_rec_fault f;
	size_t tail;

	(void)arg;
	if (rec->type != PC_REC_FAULT)
		return;
	pc_rec_copy(rec, &f, sizeof(f), &tail);
	add_row(0, f.tid, f.weight);
}

static uint64_t maps_found;

static void on_map(const struct pc_rec *rec, const char *text)
{
	struct pc_rec_map m;
	size_t tail;
	const char *path;

	if (rec->type != PC_REC_MAP)
		return;
	path = (const char *)pc_rec_copy(rec, &m, sizeof(m), &tail);
	if (m.path_len > tail || !memmem(path, m.path_len, text, strlen(text)))
		return;
	maps_found++;
	printf("%u %" PRIx64 "-%" PRIx64 " %.*s\n", m.pid, m.start, m.end, (int)m.path_len, path);
}

static int print_rows(int with_key)
{
	for (size_t i = 0; i < nrows; i++) {
		if (with_key)
			printf("0x%" PRIx64 " ", rows[i].key);
		printf("%u %" PRIu64 " %" PRIu64 "\n", rows[i].tid, rows[i].n, rows[i].sum);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc == 3 && strcmp(argv[1], "mutexes") == 0) {
		err = for_each_record(argv[2], on_mutex, NULL);
		return err ? err : print_rows(1);
	}
	if (argc == 3 && strcmp(argv[1], "locks") == 0) {
		err = for_each_record(argv[2], on_lock, NULL);
		printf("records %" PRIu64 " total_ns %" PRIu64 " locks %zu with_kstack %" PRIu64 "\n",
		       locks_n, locks_ns, nrows, locks_kstack);
		return err;
	}
	if (argc == 3 && strcmp(argv[1], "faults") == 0) {
		err = for_each_record(argv[2], on_fault, NULL);
		return err ? err : print_rows(0);
	}
	if (argc == 4 && strcmp(argv[1], "maps") == 0) {
		err = for_each_record(argv[2], on_map, argv[3]);
		return err ? err : (maps_found ? 0 : 1);
	}
	fprintf(stderr, "usage: lock_check mutexes|locks|faults FILE | maps FILE TEXT\n");
	return 2;
}
