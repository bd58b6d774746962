/* cli.h - perfcap-record's command line: the options, their validation,
 * and the --help text. */
#ifndef RECORD_CLI_H
#define RECORD_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfcap_bpf.h"

enum target_mode {
	TARGET_NONE = 0,
	TARGET_COMMAND,       /* -- CMD ARGS */
	TARGET_PIDS,          /* -p PID[,PID...] */
	TARGET_ALL,           /* -a */
};

#define DEFAULT_FREQ_HZ    99
#define DEFAULT_OFFCPU_MIN_NS (1000ull * 1000) /* 1 ms */
#define DEFAULT_OFFCPU_STACK_REUSE_NS (1000ull * 1000 * 1000) /* 1 s */
#define DEFAULT_LOCK_MIN_NS   (10ull * 1000)   /* 10 us */
#define DEFAULT_FAULT_ONE_IN  100
#define DEFAULT_OUTPUT     "run.perfcap"
#define FALLBACK_MAX_FREQ  100000
#define DEFAULT_STACK_COPY (32u * 1024) /* --stack-copy: bytes of user stack */
/* --req-rate: requests a second the req source follows (windows above it;
 * docs/perfcap-record.md, the req source and PERFORMANCE ON REAL SERVERS) */
#define DEFAULT_REQ_RATE 10000
/* --sched-rate: context switches of traced threads a second the sched
 * source follows (windows above it; 0: every one) */
#define DEFAULT_SCHED_RATE 10000
/* --syscall-rate: system calls of traced threads a second the syscall
 * program (syscall, mux, net, lock, mem) follows; windows above it (0:
 * every call; docs/perfcap-record.md, --syscall-rate) */
#define DEFAULT_SYSCALL_RATE 20000

struct probe_spec;

struct record_options {
	uint64_t freq_hz;
	const char *output;
	bool force;
	uint64_t duration_ns;     /* 0: until the target ends or a signal */
	uint64_t max_size;        /* --max-size: bytes, 0: none (size_limit.h) */
	uint64_t flight_size;     /* --flight-recorder: bytes of events kept, 0: off */
	enum target_mode mode;
	pid_t *pids;              /* TARGET_PIDS */
	size_t npids;
	char **command;           /* TARGET_COMMAND: NULL-terminated argv */
	bool verbose;
	uint32_t stack_copy;      /* --stack-copy: bytes of user stack per stack, 0: off */
	bool offcpu_copy_at_switch; /* --offcpu-copy switch-out: not at the return */
	uint64_t offcpu_stack_reuse_ns; /* --offcpu-stack-reuse: how long a stack stands for later ones */
	bool jvm_perfmap;         /* --jvm-perfmap: ask running JVMs for their perf map */
	/* event sources */
	const char *events;       /* -e as given; NULL: the default set */
	bool selected[PERFCAP_SRC_MAX]; /* by source id, always-on ones included */
	bool list_events;         /* --list-events: print them and exit */
	bool strict;              /* fail if a selected source cannot attach */
	uint64_t offcpu_min_ns;   /* sched: shortest off-CPU interval recorded */
	const char *syscalls;     /* syscall: --syscalls LIST; NULL: the default set */
	bool mutex_uprobes;       /* lock: --mutex-uprobes on pthread_mutex_lock */
	uint64_t lock_min_ns;     /* lock: shortest contention / mutex wait emitted */
	uint64_t fault_one_in;    /* mem: --fault-sample N, keep 1 page fault in N */
	uint64_t syscall_min_ns;  /* syscall sets: shortest call emitted (all counted) */
	uint64_t agg_slow_ns;     /* agg: --slow-call, shortest call also emitted raw */
	struct probe_spec *probes; /* probe: the uprobe:/usdt: items of -e, in order */
	size_t nprobes;
	bool gc_probes;           /* -e gc: the targets' runtimes' GC probes (gc_runtimes.h) */
	uint64_t probe_min_ns;    /* probe: --probe-min, shortest call recorded (all counted) */
	bool probe_no_stack;      /* probe: --probe-no-stack, records without the user stack */
	uint64_t req_rate;        /* req: --req-rate, requests a second followed; 0: all */
	uint64_t syscall_rate;    /* syscall sets: --syscall-rate, calls a second; 0: all */
	uint64_t sched_rate;      /* sched: --sched-rate, switches a second followed; 0: all */
	/* in-kernel filters (besides the pid filter of -p / a command) */
	const char *comm;         /* --comm: process name, NULL: any */
	const char *cgroup_path;  /* --cgroup: NULL: any */
	uint64_t cgroup_id;       /* resolved from cgroup_path */
	uint32_t cgroup_level;
	/* sampling of event sources (never of CPU samples) */
	uint64_t sample_one_in;   /* keep 1 record in N; 1: all */
	uint64_t sample_seed;     /* given or drawn at random; in the META */
	uint64_t rate_cap;        /* records/s per CPU per source; 0: none */
	int argc;                 /* perfcap-record's own argv, for the META */
	char **argv;
};

/* Parses and validates argv. On any error prints one line and returns
 * non-zero (the exit status to use). With --list-events set, no target is
 * required (the caller prints the list). */
int cli_parse(int argc, char **argv, struct record_options *opts);

const char *target_mode_name(enum target_mode mode);

void cli_free(struct record_options *opts);

#endif /* RECORD_CLI_H */
