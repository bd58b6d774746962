/* test_diagnose.c - the report's diagnosis on synthetic captures, one per
 * cause, each built so the answer is known exactly: the injected cause
 * must be ranked first with its exact key number (docs/report-json.md).
 * The JSON is read with python3's json module, which also checks that it
 * is valid JSON. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "capture_builder.h"
#include "event_builder.h"
#include "run_tool.h"

#define T(ms) (SEC + (uint64_t)(ms) * MS)  /* captures start at 1 s */
#define NR_PWRITE64 18
#define NR_RECVFROM 45
#define NR_FSYNC 74
#define NR_FUTEX 202
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_WAIT_BITSET_PRIVATE 137
#define DEV_8_0 (8u << 20)

/* Runs "report --json" on the capture (plus extra arguments) and returns
 * the stdout; asserts success. */
static char *report_json(const char *cap, const char *a1, const char *a2)
{
	struct tool_result r;
	char *out;

	run_analyze(&r, "report", "--json", "--no-local-files", cap, a1, a2, NULL);
	cr_assert_eq(r.status, 0, "report --json: %s", r.err);
	out = r.out;
	r.out = NULL;
	tool_result_free(&r);
	return out;
}

/* Evaluates a Python expression over the parsed JSON document d; returns
 * its printed value (malloc'd, trailing newline removed). Fails the test
 * if the JSON does not parse. */
static char *json_eval(const char *dir, const char *json, const char *expr)
{
	char *path = scratch_path(dir, "report.json");
	char *expr_path = scratch_path(dir, "expr.py");
	char cmd[2048], *value = calloc(1, 4096);
	FILE *f = fopen(path, "w"), *e = fopen(expr_path, "w");
	FILE *p;

	cr_assert(f && e && value);
	fputs(json, f);
	fclose(f);
	fputs(expr, e);
	fclose(e);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
		 " print(eval(open(sys.argv[2]).read()))' %s %s 2>&1", path, expr_path);
	p = popen(cmd, "r");
	cr_assert(p);
	value[fread(value, 1, 4095, p)] = '\0';
	cr_assert_eq(pclose(p), 0, "python3: %s (expr %s)", value, expr);
	value[strcspn(value, "\n")] = '\0';
	free(path);
	free(expr_path);
	return value;
}

#define expect_json(dir, json, expr, expected) do { \
	char *got_ = json_eval(dir, json, expr); \
	cr_expect_str_eq(got_, expected, "%s -> %s", expr, got_); \
	free(got_); \
} while (0)

static char *write_capture(const char *dir, const char *name, struct event_capture *ev)
{
	char *path = scratch_path(dir, name);

	cr_assert_eq(build_event_capture(path, ev), 0);
	ev_free(ev);
	return path;
}

/* Thread 100 runs for ms milliseconds, sampled every 10 ms, 8 samples of
 * 10 in A and 2 in B; with busy_ns or steal_ns, STATS host.cpu.* say the
 * hypervisor took steal_ns of the busy + steal time. */
static char *cpu_bound_capture(const char *dir, const char *name, unsigned ms, uint64_t busy_ns,
			       uint64_t steal_ns)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(ms), "cpu,sched");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 100);
	for (unsigned i = 0; i < ms / 10; i++)
		ev_sample_stack(&ev, T(i * 10 + 5), 100, 100, i % 10 < 8 ? STACK_A : STACK_B,
				PC_STACK_NONE);
	if (busy_ns || steal_ns) {
		pc_buf_add_kv_u64(&ev.stats, "host.cpu.busy_ns", busy_ns);
		pc_buf_add_kv_u64(&ev.stats, "host.cpu.idle_ns", 0);
		pc_buf_add_kv_u64(&ev.stats, "host.cpu.steal_ns", steal_ns);
	}
	return write_capture(dir, name, &ev);
}

/* Thread 100 runs the whole second in A (80 samples) and B (20). */
Test(diagnose, cpu_bound_names_the_hot_function)
{
	char *dir = scratch_dir();
	char *cap = cpu_bound_capture(dir, "cpu.perfcap", 1000, 0, 0);
	char *json = report_json(cap, NULL, NULL);

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_bound");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "80");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['unit']", "percent");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['function']", "A");
	expect_json(dir, json, "round(d['diagnosis']['causes'][0]['score'], 3)", "0.8");
	expect_json(dir, json, "d['cpu']['functions'][0]['self']", "80");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* A fifth of the time the machine had work went to other guests: the
 * caveat says so, the CPU-bound verdict drops to medium confidence and the
 * report's method section shows the shares. 2% of it, or 20% of a tenth
 * of a second (/proc/stat's hundredths), is no caveat. 3 s, 300 samples:
 * enough for a confident CPU share without steal. */
Test(diagnose, cpu_stolen_by_the_hypervisor_is_a_caveat)
{
	char *dir = scratch_dir();
	char *stolen = cpu_bound_capture(dir, "stolen.perfcap", 3000, 1600000000, 400000000);
	char *little = cpu_bound_capture(dir, "little.perfcap", 3000, 1960000000, 40000000);
	char *tiny = cpu_bound_capture(dir, "tiny.perfcap", 3000, 80000000, 20000000);
	char *a = report_json(stolen, NULL, NULL), *b = report_json(little, NULL, NULL);
	char *c = report_json(tiny, NULL, NULL);
	const char *steal = "sum('hypervisor gave 20% of this machine' in x for x in"
			    " d['diagnosis']['caveats'])";

	expect_json(dir, a, "d['diagnosis']['causes'][0]['kind']", "cpu_bound");
	expect_json(dir, a, steal, "1");
	expect_json(dir, a, "d['diagnosis']['confidence']", "medium");
	expect_json(dir, a, "round(d['scope']['host_cpu']['stolen_share'], 3)", "0.2");
	expect_json(dir, b, "sum('hypervisor' in x for x in d['diagnosis']['caveats'])", "0");
	expect_json(dir, b, "d['diagnosis']['confidence']", "high");
	expect_json(dir, c, "sum('hypervisor' in x for x in d['diagnosis']['caveats'])", "0");
	free(a);
	free(b);
	free(c);
	free(stolen);
	free(little);
	free(tiny);
	scratch_remove(dir);
}

/* A fifth of the busy CPUs' sampling ticks took no sample: the caveat
 * says so and the CPU-bound verdict drops to medium confidence; 2% is no
 * caveat. A quiet capture's 4 of 8 (two CPUs at 99 Hz: within the 8 ticks
 * the count cannot tell from none) is none either, where 120 of 600 on
 * the same host still is. */
Test(diagnose, missed_sampling_ticks_are_a_caveat)
{
	char *dir = scratch_dir();
	const char *names[4] = { "missed.perfcap", "few.perfcap", "quiet.perfcap", "host.perfcap" };
	const uint64_t missed[4] = { 120, 12, 4, 120 }, due[4] = { 600, 600, 8, 600 };
	char *json[4];
	const char *caveat = "sum('took no sample' in x for x in d['diagnosis']['caveats'])";

	for (int i = 0; i < 4; i++) {
		struct event_capture ev;
		char *cap;

		ev_init(&ev, T(0), T(3000), "cpu,sched");
		ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 100);
		for (unsigned k = 0; k < 300; k++)
			ev_sample_stack(&ev, T(k * 10 + 5), 100, 100, k % 10 < 8 ? STACK_A : STACK_B,
					PC_STACK_NONE);
		pc_buf_add_kv_u64(&ev.stats, "cpu.ticks.due", due[i]);
		pc_buf_add_kv_u64(&ev.stats, "cpu.ticks.run", due[i] - missed[i]);
		pc_buf_add_kv_u64(&ev.stats, "cpu.ticks.missed", missed[i]);
		if (i >= 2) {   /* the host's CPUs and the sampling rate are known */
			pc_buf_add_kv(&ev.meta, "host.ncpus", "2");
			pc_buf_add_kv(&ev.meta, "sampling.cpu.freq_hz", "99");
		}
		cap = write_capture(dir, names[i], &ev);
		json[i] = report_json(cap, NULL, NULL);
		free(cap);
	}
	expect_json(dir, json[0], "d['diagnosis']['causes'][0]['kind']", "cpu_bound");
	expect_json(dir, json[0], caveat, "1");
	expect_json(dir, json[0], "d['diagnosis']['confidence']", "medium");
	expect_json(dir, json[0], "[r['value'] for r in d['data_quality'] if r['key'] =="
		    " 'ticks.missed'][0]", "120");
	expect_json(dir, json[1], caveat, "0");
	expect_json(dir, json[1], "d['diagnosis']['confidence']", "high");
	expect_json(dir, json[2], caveat, "0");
	expect_json(dir, json[2], "[r['value'] for r in d['data_quality'] if r['key'] =="
		    " 'ticks.missed_slack'][0]", "8");
	expect_json(dir, json[3], caveat, "1");
	for (int i = 0; i < 4; i++)
		free(json[i]);
	scratch_remove(dir);
}

/* Three waiters each wait twice 200 ms on the mutex at 0x7000 (woken by
 * thread 101); thread 105 waits 900 ms on a condition variable (a
 * FUTEX_WAIT_BITSET: waiting for work, not a lock). */
Test(diagnose, lock_contention_on_the_mutex_not_the_condvar)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "syscall");
	for (uint32_t tid = 102; tid <= 104; tid++)
		for (int i = 0; i < 2; i++) {
			uint64_t start = T(100 + i * 400 + (tid - 102) * 10);
			ev_syscall(&ev, start, 200 * MS, 100, tid, NR_FUTEX, 0, 0x7000,
				   FUTEX_WAIT_PRIVATE, 2);
			ev_syscall(&ev, start + 200 * MS - 1000, 500, 100, 101, NR_FUTEX, 1, 0x7000,
				   FUTEX_WAKE_PRIVATE, 1);
		}
	ev_syscall(&ev, T(50), 900 * MS, 100, 105, NR_FUTEX, 0, 0x8000,
		   FUTEX_WAIT_BITSET_PRIVATE, 0);
	cap = write_capture(dir, "lock.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "lock_contention");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "1200000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['address']", "0x7000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['waiters']", "3");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['holder_tid']", "101");
	expect_json(dir, json, "len(d['diagnosis']['causes'])", "1");
	expect_json(dir, json, "[r['type'] for r in d['contention']['futex']]",
		    "['mutex', 'condition']");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Thread 101 blocks twice 300 ms in uninterruptible sleep inside fsync;
 * the device served 4 requests (queue 50 ms, service 100 ms each). */
Test(diagnose, disk_io_with_queue_and_service)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "sched,syscall,block");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int i = 0; i < 2; i++) {
		uint64_t t = T(100 + i * 400);
		ev_switch(&ev, t, 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
		ev_block(&ev, t + 150 * MS, 50 * MS, 100 * MS, 100, 101, DEV_8_0, 1, 8, 4096);
		ev_block(&ev, t + 290 * MS, 50 * MS, 100 * MS, 100, 101, DEV_8_0, 1, 16, 4096);
		ev_wakeup(&ev, t + 300 * MS, 100, 101, 0, 0, 0, 0);
		ev_switch(&ev, t + 300 * MS, 0, 0, 0, 0, 100, 101);
		ev_syscall(&ev, t - MS, 302 * MS, 100, 101, NR_FSYNC, 0, 3, 0, 0);
	}
	cap = write_capture(dir, "disk.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "disk_io");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "600000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['device']", "8:0");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['queue_ns']", "200000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['service_ns']",
		    "400000000");
	expect_json(dir, json, "d['io']['devices'][0]['requests']", "4");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Thread 101 (pid 100) and thread 200 (pid 200) share CPU 0 in 10 ms
 * slices; 101 also has a sample in A for each slice it runs, so it
 * is compute-bound for half its time and waits for the CPU the other
 * half: contention ranks first (book 12.2). */
static char *contention_capture(const char *dir)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(1000), "cpu,sched");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int i = 1; i < 100; i++) {
		if (i % 2)
			ev_switch(&ev, T(i * 10), 0, 100, 101, PC_TASK_RUNNING, 200, 200);
		else
			ev_switch(&ev, T(i * 10), 0, 200, 200, PC_TASK_RUNNING, 100, 101);
	}
	for (int i = 0; i < 100; i += 2)
		ev_sample_stack(&ev, T(i * 10 + 5), 100, 101, STACK_A, PC_STACK_NONE);
	return write_capture(dir, "runq.perfcap", &ev);
}

/* Thread 101 (pid 100) runs 10 ms, is preempted, and waits 9 ms while
 * three other tasks take CPU 0 in turn: 300 for 2 ms, 400 for 6 ms, 500
 * for 1 ms (500 switches 101 back in); 50 times. The wait is split by who
 * ran: 400 300 ms, 300 100 ms, 500 50 ms, not all to 500, the task the
 * switch-in replaced. */
static char *relay_capture(const char *dir, int filtered)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(1000), "cpu,sched");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int k = 0; k < 50; k++) {
		int s = k * 19;
		ev_switch(&ev, T(s + 10), 0, 100, 101, PC_TASK_RUNNING, 300, 300);
		if (!filtered) {   /* switches between untraced tasks */
			ev_switch(&ev, T(s + 12), 0, 300, 300, PC_TASK_RUNNING, 400, 400);
			ev_switch(&ev, T(s + 18), 0, 400, 400, PC_TASK_RUNNING, 500, 500);
		}
		ev_switch(&ev, T(s + 19), 0, 500, 500, PC_TASK_RUNNING, 100, 101);
	}
	return write_capture(dir, filtered ? "relay-filtered.perfcap" : "relay.perfcap", &ev);
}

Test(diagnose, cpu_contention_splits_a_wait_among_the_tasks_that_ran)
{
	char *dir = scratch_dir();
	char *cap = relay_capture(dir, 0);
	char *json = report_json(cap, "--pid", "100");
	const char *c = "d['diagnosis']['causes'][0]['subject']['competitors']";
	char expr[160];

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_contention");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "450000000");
	snprintf(expr, sizeof(expr), "[(r['tid'], r['cpu_ns']) for r in %s]", c);
	expect_json(dir, json, expr, "[(400, 300000000), (300, 100000000), (500, 50000000)]");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* The same without the switches among 300, 400 and 500 (a filtered
 * recording sees only those of the traced thread): each wait is split
 * evenly between the task seen starting it (300) and the one seen ending
 * it (500); 400 is invisible. */
Test(diagnose, cpu_contention_splits_an_unseen_stretch_between_its_ends)
{
	char *dir = scratch_dir();
	char *cap = relay_capture(dir, 1);
	char *json = report_json(cap, "--pid", "100");

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_contention");
	expect_json(dir, json, "sorted((r['tid'], r['cpu_ns']) for r in"
		    " d['diagnosis']['causes'][0]['subject']['competitors'])",
		    "[(300, 225000000), (500, 225000000)]");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* The relay on each of ncpus CPUs at once, with a thread of pid 100 and
 * its own three competitors (300 + c, 400 + c, 500 + c) on CPU c. With 6
 * CPUs the switches of the waits' CPUs are read sorted by (cpu, ts), with
 * 1 by one scan per CPU (diagnose_runq.c, scan_per_cpu): each CPU's waits
 * are split among its own tasks either way. */
static char *relay_capture_cpus(const char *dir, int ncpus)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(1000), "cpu,sched");
	for (int c = 0; c < ncpus; c++)
		ev_switch(&ev, T(0), (uint32_t)c, 0, 0, 0, 100, 101 + (uint32_t)c);
	for (int k = 0; k < 50; k++) {
		int s = k * 19;

		for (uint32_t c = 0; c < (uint32_t)ncpus; c++) {
			ev_switch(&ev, T(s + 10), c, 100, 101 + c, PC_TASK_RUNNING, 300 + c, 300 + c);
			ev_switch(&ev, T(s + 12), c, 300 + c, 300 + c, PC_TASK_RUNNING, 400 + c,
				  400 + c);
			ev_switch(&ev, T(s + 18), c, 400 + c, 400 + c, PC_TASK_RUNNING, 500 + c,
				  500 + c);
			ev_switch(&ev, T(s + 19), c, 500 + c, 500 + c, PC_TASK_RUNNING, 100, 101 + c);
		}
	}
	return write_capture(dir, "relay-cpus.perfcap", &ev);
}

static void check_relay_cpus(int ncpus)
{
	char *dir = scratch_dir();
	char *cap = relay_capture_cpus(dir, ncpus);
	char *json = report_json(cap, "--pid", "100");
	char want[64], expr[256];

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_contention");
	snprintf(want, sizeof(want), "%lld", ncpus * 450000000ll);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", want);
	/* every competitor has the share of its own CPU's waits */
	snprintf(expr, sizeof(expr), "all(r['cpu_ns'] == {3: 100000000, 4: 300000000,"
		 " 5: 50000000}[r['tid'] // 100] for r in"
		 " d['diagnosis']['causes'][0]['subject']['competitors'])");
	expect_json(dir, json, expr, "True");
	free(json);
	free(cap);
	scratch_remove(dir);
}

Test(diagnose, cpu_contention_per_cpu_scans) { check_relay_cpus(1); }
Test(diagnose, cpu_contention_sorted_switches) { check_relay_cpus(6); }

Test(diagnose, cpu_contention_names_the_competitor)
{
	char *dir = scratch_dir();
	char *cap = contention_capture(dir);
	char *json = report_json(cap, "--pid", "100");

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_contention");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "500000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['competitors'][0]['tid']",
		    "200");
	expect_json(dir, json, "d['diagnosis']['causes'][1]['kind']", "cpu_bound");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Thread 101 waits 500 ms in recvfrom on a connected socket. */
Test(diagnose, network_wait_names_the_peer)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "sched,syscall,net");
	ev_socket_v4(&ev, T(10), 100, 101, 5, PC_SOCK_F_CONNECTED, "10.0.0.1", 40000,
		     "10.0.0.2", 6379, 77);
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	ev_switch(&ev, T(200), 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_wakeup(&ev, T(700), 100, 101, 0, 0, 0, 0);
	ev_switch(&ev, T(700), 0, 0, 0, 0, 100, 101);
	ev_syscall(&ev, T(199), 502 * MS, 100, 101, NR_RECVFROM, 10, 5, 0, 100);
	cap = write_capture(dir, "net.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "network_wait");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "500000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['peer']", "10.0.0.2:6379");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Four 1 s windows: thread 101 writes every 100 ms; in the last window
 * each write blocks 40 ms on the disk. I/O rises, CPU does not: "io".
 * A competitor (pid 200) appears in the last window and burns a CPU: it
 * is counted apart, not taken for the victim's CPU rising. */
Test(diagnose, spike_window_io_verdict)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(4000), "sched,syscall,block");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	ev_switch(&ev, T(3000), 1, 0, 0, 0, 200, 200);
	for (int i = 0; i < 40; i++) {
		uint64_t t = T(i * 100 + 10);
		if (i < 30) {
			ev_syscall(&ev, t, MS, 100, 101, NR_PWRITE64, 4096, 3, 0, 4096);
			continue;
		}
		ev_switch(&ev, t + MS, 0, 100, 101, PC_TASK_UNINTERRUPTIBLE, 0, 0);
		ev_block(&ev, t + 40 * MS, 0, 38 * MS, 100, 101, DEV_8_0, 1, 8, 4096);
		ev_wakeup(&ev, t + 41 * MS, 100, 101, 0, 0, 0, 0);
		ev_switch(&ev, t + 41 * MS, 0, 0, 0, 0, 100, 101);
		ev_syscall(&ev, t, 42 * MS, 100, 101, NR_PWRITE64, 4096, 3, 0, 4096);
	}
	cap = write_capture(dir, "spike.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['spike']['verdict']", "io");
	expect_json(dir, json, "d['diagnosis']['spike']['window_start_ns'] - 1000000000",
		    "3000000000");
	expect_json(dir, json, "d['diagnosis']['spike']['baseline_start_ns'] - 1000000000",
		    "2000000000");
	expect_json(dir, json, "d['diagnosis']['spike']['cpu_ratio'] < 1.5", "True");
	expect_json(dir, json, "d['diagnosis']['spike']['threads_compared']", "1");
	expect_json(dir, json, "d['diagnosis']['spike']['new_threads']", "1");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "disk_io");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']",
		    "400000000");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* The default sources (no system calls): four 1 s windows, thread 101
 * writes every 100 ms and idles in poll() between; in the last window
 * each write blocks 40 ms instead of 0.5 ms. The spike comes from the
 * waits source's sums of blocking I/O waits; the poll waits, long in
 * window 1 (waiting for work, not latency), are left out of it. Imported
 * with 250 ms windows, the spike window is still the sums' 1 s window. */
Test(diagnose, spike_window_from_waits_sums)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *db, *json;
	struct tool_result r;

	ev_init(&ev, T(0), T(4000), "cpu,sched,block,waits");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int i = 0; i < 40; i++) {
		uint64_t t = T(i * 100 + 10), blocked = i < 30 ? MS / 2 : 40 * MS;
		ev_switch(&ev, t + MS, 0, 100, 101, PC_TASK_UNINTERRUPTIBLE, 0, 0);
		ev_block(&ev, t + MS + blocked - MS / 10, 0, blocked / 2, 100, 101, DEV_8_0, 1, 8,
			 4096);
		ev_wakeup(&ev, t + MS + blocked, 100, 101, 0, 0, 0, 0);
		ev_switch(&ev, t + MS + blocked, 0, 0, 0, 0, 100, 101);
	}
	for (int k = 0; k < 4; k++) {
		ev_thread_metric(&ev, T(k * 1000), SEC, 100, 101, PC_METRIC_VFS_WRITE,
				 PC_METRIC_F_WAIT, 10, k < 3 ? 5 * MS : 400 * MS);
		ev_thread_metric(&ev, T(k * 1000), SEC, 100, 101, PC_METRIC_POLL, PC_METRIC_F_WAIT,
				 k == 1 ? 1 : 10, k == 1 ? 990 * MS : 500 * MS);
	}
	cap = write_capture(dir, "spike-waits.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['spike']['latency_measure']",
		    "mean blocking I/O wait");
	expect_json(dir, json, "d['diagnosis']['spike']['verdict']", "io");
	expect_json(dir, json, "d['diagnosis']['spike']['window_start_ns'] - 1000000000",
		    "3000000000");
	expect_json(dir, json, "d['diagnosis']['spike']['baseline_start_ns'] - 1000000000",
		    "2000000000");
	expect_json(dir, json, "round(d['diagnosis']['spike']['latency_ns'])", "40000000");
	expect_json(dir, json, "round(d['diagnosis']['spike']['baseline_latency_ns'])", "500000");
	expect_json(dir, json, "d['diagnosis']['spike']['cpu_ratio'] < 1.5", "True");
	free(json);
	db = scratch_path(dir, "spike-waits.db");
	run_analyze(&r, "import", "--no-local-files", "--window", "250ms", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "import --window 250ms: %s", r.err);
	tool_result_free(&r);
	json = report_json(db, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['spike']['window_start_ns'] - 1000000000",
		    "3000000000");
	expect_json(dir, json, "d['diagnosis']['spike']['window_end_ns'] - 1000000000",
		    "4000000000");
	expect_json(dir, json, "d['diagnosis']['spike']['verdict']", "io");
	free(json);
	free(db);
	free(cap);
	scratch_remove(dir);
}

/* The req source without waits: four 1 s windows, thread 101 serves a
 * request every 100 ms, in 1 ms except in the last window, where each
 * takes 40 ms. The spike is measured by the requests' mean service time
 * per window, which the report reads in its one pass over the requests
 * (report_requests_preload) and the spike rule takes from it; with
 * --from 1500ms the scope's first window starts mid-window, and the
 * requests that started before the scope are not counted in it. */
Test(diagnose, spike_window_from_requests)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(4000), "cpu,sched,req");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int i = 0; i < 40; i++) {
		uint64_t t = T(i * 100 + 10), service = i < 30 ? MS : 40 * MS;
		ev_request(&ev, &(struct ev_request){ .cookie = 0x77, .conn_ts = T(1),
			.start = t, .end = t + service, .pid = 100, .tid = 101,
			.number = (uint32_t)i + 1, .fd = 7, .origin = PC_REQUEST_ACCEPTED,
			.lport = 6379 });
	}
	cap = write_capture(dir, "spike-requests.perfcap", &ev);
	for (int windowed = 0; windowed < 2; windowed++) {
		json = report_json(cap, windowed ? "--from" : NULL, windowed ? "1500ms" : NULL);
		expect_json(dir, json, "d['diagnosis']['spike']['latency_measure']",
			    "mean request service time");
		expect_json(dir, json, "d['diagnosis']['spike']['window_start_ns'] - 1000000000",
			    "3000000000");
		expect_json(dir, json, "d['diagnosis']['spike']['baseline_start_ns'] - 1000000000",
			    "2000000000");
		expect_json(dir, json, "round(d['diagnosis']['spike']['latency_ns'])", "40000000");
		expect_json(dir, json, "round(d['diagnosis']['spike']['baseline_latency_ns'])",
			    "1000000");
		free(json);
	}
	free(cap);
	scratch_remove(dir);
}

/* The same capture, with the window cut before the spike: no spike, no
 * disk cause; with --tid of another thread: nothing at all. */
Test(diagnose, window_and_tid_filters_change_the_verdict)
{
	char *dir = scratch_dir();
	char *cap = contention_capture(dir);
	char *json = report_json(cap, "--from", "500ms");

	expect_json(dir, json, "d['scope']['from_ns']", "1500000000");
	expect_json(dir, json, "d['scope']['duration_ns']", "500000000");
	expect_json(dir, json, "[c['kind'] for c in d['diagnosis']['causes']][:1]",
		    "['cpu_contention']");
	expect_json(dir, json, "d['cpu']['samples']", "25");
	free(json);
	json = report_json(cap, "--tid", "999");
	expect_json(dir, json, "d['diagnosis']['causes']", "[]");
	expect_json(dir, json, "d['cpu']['samples']", "0");
	free(json);
	json = report_json(cap, "--comm", "other");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['victim_tids']", "200");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['competitors'][0]['tid']",
		    "101");
	expect_json(dir, json, "[t['tid'] for t in d['threads']]", "[200]");
	free(json);
	json = report_json(cap, "--to", "1200000000");
	expect_json(dir, json, "d['scope']['to_ns']", "1200000000");
	expect_json(dir, json, "d['cpu']['samples']", "10");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Gives an imported database known requests (what request_queueing
 * shows) and pool_utilisation (a table in place of the view): pid 100,
 * workers 101 and 102, 8 requests queued 100 ms and served 100 ms each,
 * busy_avg workers busy on average. */
static void add_pool_tables(const char *db_path, double busy_avg)
{
	sqlite3 *db;
	char sql[512];

	/* The rule is checked on exact stand-in rows: requests, which
	 * request_queueing projects (the pass that fills it at import is
	 * tested in test_views.c and e2e-accept-pool), and a table in place
	 * of the pool_utilisation view. */
	cr_assert_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "DELETE FROM requests; DROP TABLE pool_utilisation;"
				  "CREATE TABLE pool_utilisation (pid, window_start, window_end,"
				  " workers, busy_avg, queue_depth_avg, queue_depth_max);",
				  NULL, NULL, NULL), SQLITE_OK);
	for (int i = 0; i < 8; i++) {
		uint64_t ready = T(100 + i * 100);
		snprintf(sql, sizeof(sql), "INSERT INTO requests (pid, fd, conn_ts, request,"
			 " ready_ts, start_ts, pickup_tid, tids, queue_ns, service_ns, end_ts)"
			 " VALUES (100, 5, %llu, 1, %llu, %llu, %d, '%d', %llu, %llu, %llu)",
			 (unsigned long long)ready, (unsigned long long)ready,
			 (unsigned long long)(ready + 100 * MS), 101 + i % 2, 101 + i % 2,
			 100 * MS, 100 * MS, (unsigned long long)(ready + 200 * MS));
		cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	}
	snprintf(sql, sizeof(sql), "INSERT INTO pool_utilisation VALUES (100, %llu, %llu, 2, %f,"
		 " 3, 6)", (unsigned long long)T(0), (unsigned long long)T(1000), busy_avg);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* Workers 101 and 102 block in recvfrom (class net, a downstream) or in
 * poll (idle, waiting for work) from 100 ms to 900 ms. */
static char *pool_db(const char *dir, int nr, double busy_avg)
{
	struct event_capture ev;
	char *cap = scratch_path(dir, "pool.perfcap"), *db = scratch_path(dir, "pool.db");
	struct tool_result r;

	ev_init(&ev, T(0), T(1000), "sched,syscall");
	for (uint32_t tid = 101; tid <= 102; tid++) {
		ev_switch(&ev, T(0), tid - 101, 0, 0, 0, 100, tid);
		ev_switch(&ev, T(100), tid - 101, 100, tid, PC_TASK_INTERRUPTIBLE, 0, 0);
		ev_wakeup(&ev, T(900), 100, tid, 0, 0, tid - 101, 0);
		ev_switch(&ev, T(900), tid - 101, 0, 0, 0, 100, tid);
		ev_syscall(&ev, T(99), 802 * MS, 100, tid, (uint32_t)nr, 0, 5, 0, 100);
	}
	cr_assert_eq(build_event_capture(cap, &ev), 0);
	ev_free(&ev);
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	add_pool_tables(db, busy_avg);
	free(cap);
	return db;
}

Test(diagnose, pool_underprovisioned_ranks_before_the_workers_waits)
{
	char *dir = scratch_dir();
	char *db = pool_db(dir, NR_RECVFROM, 1.9);
	char *json = report_json(db, NULL, NULL);

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "pool_underprovisioned");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "100000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['workers']", "2");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['queue_depth_max']", "6");
	expect_json(dir, json, "d['diagnosis']['causes'][1]['kind']", "network_wait");
	/* the stand-in requests are requests for every section */
	expect_json(dir, json, "d['latency']['requests']['count']", "8");
	free(json);
	free(db);
	scratch_remove(dir);
}

Test(diagnose, idle_workers_with_queued_requests_is_a_dispatch_stall)
{
	char *dir = scratch_dir();
	char *db = pool_db(dir, 7 /* poll */, 0.2);
	char *json = report_json(db, NULL, NULL);

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "dispatch_stall");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "100000000");
	free(json);
	free(db);
	scratch_remove(dir);
}

/* An event loop: thread 101 of pid 100 picks up all 8 requests (queued
 * 100 ms, served 100 ms each: half their latency queued). In the
 * contended case it runs 0-500 ms, is preempted by hog 200 (pid 200)
 * until 900 and runs to the end: running 60%, runnable 40%. In the
 * saturated case it runs 0-900 ms, then sleeps: running 90%. */
static char *loop_db(const char *dir, int contended)
{
	struct event_capture ev;
	char *cap = scratch_path(dir, "loop.perfcap"), *db = scratch_path(dir, "loop.db");
	struct tool_result r;
	sqlite3 *h;

	ev_init(&ev, T(0), T(1000), "sched,syscall");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	if (contended) {
		ev_switch(&ev, T(500), 0, 100, 101, 0 /* preempted */, 200, 200);
		ev_switch(&ev, T(900), 0, 200, 200, 0, 100, 101);
	} else {
		ev_switch(&ev, T(900), 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
	}
	cr_assert_eq(build_event_capture(cap, &ev), 0);
	ev_free(&ev);
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	add_pool_tables(db, 1.0);
	cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(h, "UPDATE requests SET pickup_tid = 101, tids = '101';"
				  "UPDATE pool_utilisation SET workers = 1;", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(h);
	free(cap);
	return db;
}

/* Runnable time is waiting for a CPU, not the loop's own work: a loop
 * held back by a hog is cpu_contention's, however busy it looks. */
Test(diagnose, an_event_loop_waiting_for_a_cpu_is_not_saturated)
{
	char *dir = scratch_dir();
	char *db = loop_db(dir, 1);
	char *json = report_json(db, "--pid", "100");

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "cpu_contention");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['competitors'][0]['tid']",
		    "200");
	expect_json(dir, json, "[c['kind'] for c in d['diagnosis']['causes']"
		    " if c['kind'] == 'event_loop_saturated']", "[]");
	free(json);
	free(db);
	scratch_remove(dir);
}

Test(diagnose, an_event_loop_busy_with_its_own_work_is_saturated)
{
	char *dir = scratch_dir();
	char *db = loop_db(dir, 0);
	char *json = report_json(db, "--pid", "100");

	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "event_loop_saturated");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "100000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['workers']", "1");
	free(json);
	free(db);
	scratch_remove(dir);
}

Test(diagnose, no_cause_below_five_percent)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "sched");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	ev_switch(&ev, T(980), 0, 100, 101, PC_TASK_RUNNING, 200, 200);
	ev_switch(&ev, T(990), 0, 200, 200, PC_TASK_RUNNING, 100, 101);
	cap = write_capture(dir, "calm.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes']", "[]");
	expect_json(dir, json, "d['summary'].startswith('No cause explains')", "True");
	expect_json(dir, json, "d['diagnosis']['spike']", "None");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* One request on an accepted socket: read at 100 ms, the server thread
 * then waits 80 ms in a futex, writes the answer at 195 ms: its dominant
 * component is the futex wait, 80 of its 96 ms. */
Test(diagnose, request_dominant_component)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "sched,syscall,net");
	ev_socket_v4(&ev, T(50), 100, 101, 5, PC_SOCK_F_ACCEPTED, "10.0.0.1", 80, "10.0.0.2",
		     40000, 0xa1);
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	ev_syscall(&ev, T(100), MS, 100, 101, 0 /* read */, 10, 5, 0, 4096);
	ev_switch(&ev, T(110), 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_wakeup(&ev, T(190), 100, 101, 0, 0, 0, 0);
	ev_switch(&ev, T(190), 0, 0, 0, 0, 100, 101);
	ev_syscall(&ev, T(109), 82 * MS, 100, 101, NR_FUTEX, 0, 0x9000, FUTEX_WAIT_PRIVATE, 0);
	ev_syscall(&ev, T(195), MS, 100, 101, 1 /* write */, 10, 5, 0, 10);
	cap = write_capture(dir, "req.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['latency']['requests']['count']", "1");
	expect_json(dir, json, "d['latency']['requests']['total_ns']", "96000000");
	expect_json(dir, json, "d['latency']['requests']['dominant']",
		    "futex wait 83% (unattributed 0%)");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* Thread 101 sleeps 600 ms in clock_nanosleep: not a resource problem,
 * but the only thing there is, so the verdict says so. */
Test(diagnose, voluntary_sleep_is_ranked_but_named_as_such)
{
	char *dir = scratch_dir();
	struct event_capture ev;
	char *cap, *json;

	ev_init(&ev, T(0), T(1000), "sched,syscall");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	ev_switch(&ev, T(200), 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
	ev_wakeup(&ev, T(800), 100, 101, 0, 0, 0, 0);
	ev_switch(&ev, T(800), 0, 0, 0, 0, 100, 101);
	ev_syscall(&ev, T(199), 602 * MS, 100, 101, 230 /* clock_nanosleep */, 0, 0, 0, 0);
	cap = write_capture(dir, "sleep.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "sleep");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "600000000");
	expect_json(dir, json, "d['threads'][0]['sleep_ns']", "600000000");
	expect_json(dir, json, "d['threads'][0]['running_ns']", "400000000");
	free(json);
	free(cap);
	scratch_remove(dir);
}

/* A python process (pid 100) paused by its collector 600 ms of its
 * 1000 ms (pauses of 50, 50, 100, 100, 100, 200 ms from the GC probes),
 * every CPU sample in one function, 60 of the 100 inside pauses: the
 * collector's CPU. gc_pauses ranks first with its exact numbers, above
 * the cpu_bound cause on the same process (score 1.0 but ranked after:
 * most of its samples were the collector's). */
Test(diagnose, gc_pauses_explain_the_time_and_rank_above_compute)
{
	static const unsigned pause_ms[][2] = { { 100, 50 }, { 200, 50 }, { 300, 100 },
		{ 450, 100 }, { 600, 100 }, { 750, 200 } };
	char *dir = scratch_dir();
	struct event_capture ev;
	struct tool_result r;
	char *cap, *json, *db_path, sql[512];
	sqlite3 *db;

	ev_init(&ev, T(0), T(1000), "cpu,sched,probe");
	ev_usdt_probe(&ev, 0, "/usr/bin/python3.11", "python:gc__start", 6);
	ev_usdt_probe(&ev, 1, "/usr/bin/python3.11", "python:gc__done", 6);
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 100);
	for (int i = 0; i < 100; i++)
		ev_sample_stack(&ev, T(i * 10 + 5), 100, 100, STACK_A, PC_STACK_NONE);
	for (size_t i = 0; i < sizeof(pause_ms) / sizeof(pause_ms[0]); i++) {
		ev_probe_hit(&ev, T(pause_ms[i][0]), 100, 100, 0, 2);
		ev_probe_hit(&ev, T(pause_ms[i][0] + pause_ms[i][1]), 100, 100, 1, 0);
	}
	cap = write_capture(dir, "gc.perfcap", &ev);
	json = report_json(cap, NULL, NULL);
	expect_json(dir, json, "d['diagnosis']['causes'][0]['kind']", "gc_pauses");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['name']", "pause_total");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "600000000");
	expect_json(dir, json, "round(d['diagnosis']['causes'][0]['score'], 3)", "0.6");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['runtime']", "python");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['pid']", "100");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['pauses']", "6");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['p99_ns']", "200000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['max_ns']", "200000000");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['cpu_samples_in_pauses']",
		    "60");
	expect_json(dir, json,
		    "d['diagnosis']['causes'][0]['subject']['slow_request_overlap_pct']", "None");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['title'].split(' (')[0]",
		    "GC pauses: 6, total 600.0 ms, p99 200.0 ms");
	expect_json(dir, json, "d['diagnosis']['causes'][1]['kind']", "cpu_bound");
	expect_json(dir, json, "round(d['diagnosis']['causes'][1]['score'], 3)", "1");
	free(json);
	/* a window holding only the last pause: one pause, 200 ms */
	json = report_json(cap, "--from", "700ms");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['subject']['pauses']", "1");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['key_number']['value']", "200000000");
	free(json);
	/* 20 requests served by the process, the slowest tenth (2 of 40 ms)
	 * one inside the first pause [100, 150) ms, one between pauses
	 * ([155, 195) ms) */
	db_path = scratch_path(dir, "gc.db");
	run_analyze(&r, "import", "--no-local-files", cap, "-o", db_path, NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	tool_result_free(&r);
	cr_assert_eq(sqlite3_open(db_path, &db), SQLITE_OK);
	for (int i = 0; i < 20; i++) {
		uint64_t start = i == 0 ? T(110) : i == 1 ? T(155) : T(10 + i), len = i < 2 ? 40 * MS : MS;
		snprintf(sql, sizeof(sql), "INSERT INTO requests (pid, fd, request, tids, pickup_tid,"
			 " start_ts, end_ts, service_ns) VALUES (100, 5, %d, '100', 100, %llu, %llu,"
			 " %llu)", i, (unsigned long long)start, (unsigned long long)(start + len),
			 (unsigned long long)len);
		cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s",
			     sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	json = report_json(db_path, NULL, NULL);
	expect_json(dir, json,
		    "d['diagnosis']['causes'][0]['subject']['slow_request_overlap_pct']", "50");
	expect_json(dir, json, "d['diagnosis']['causes'][0]['title'].split(' (')[0]",
		    "GC pauses: 6, total 600.0 ms, p99 200.0 ms, 50% of slow requests overlap one");
	free(json);
	free(db_path);
	free(cap);
	scratch_remove(dir);
}

/* Thread 101 blocks five times 100 ms, each wait ended by process 300:
 * with META record.pid 300 that is the recorder itself (its /proc reads),
 * named as the observer and not left as a peer of unknown role. */
static char *woken_by_300(const char *dir, const char *name, int recorder)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(1000), "sched");
	if (recorder)
		pc_buf_add_kv(&ev.meta, "record.pid", "300");
	ev_switch(&ev, T(0), 0, 0, 0, 0, 100, 101);
	for (int i = 0; i < 5; i++) {
		uint64_t t = T(100 + 150 * i);

		ev_switch(&ev, t, 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
		ev_wakeup(&ev, t + 100 * MS, 100, 101, 300, 300, 1, 0);
		ev_switch(&ev, t + 100 * MS, 0, 0, 0, 0, 100, 101);
		ev_offcpu_woken(&ev, t + 100 * MS, 100 * MS, 100, 101, PC_TASK_INTERRUPTIBLE,
				300, 300);
	}
	return write_capture(dir, name, &ev);
}

Test(diagnose, the_recorder_as_waker_is_named)
{
	char *dir = scratch_dir();
	char *with = woken_by_300(dir, "recorder.perfcap", 1);
	char *without = woken_by_300(dir, "peer.perfcap", 0);
	char *a = report_json(with, NULL, NULL), *b = report_json(without, NULL, NULL);

	expect_json(dir, a, "sum('the recorder itself (pid 300' in c for c in"
		    " d['diagnosis']['caveats'])", "1");
	expect_json(dir, a, "sum('whose role' in c for c in d['diagnosis']['caveats'])", "0");
	expect_json(dir, b, "sum('the recorder itself' in c for c in d['diagnosis']['caveats'])",
		    "0");
	expect_json(dir, b, "sum('whose role' in c for c in d['diagnosis']['caveats'])", "1");
	free(a);
	free(b);
	free(with);
	free(without);
	scratch_remove(dir);
}

/* Four 1 s windows: every 100 ms thread 101 wakes (a timer), runs
 * base_us, writes (1 ms) and sleeps; in the last window it runs spike_us,
 * and its write then blocks 40 ms on the disk. */
static char *spike_with_cpu(const char *dir, const char *name, uint64_t base_us,
			    uint64_t spike_us)
{
	struct event_capture ev;

	ev_init(&ev, T(0), T(4000), "sched,syscall,block");
	for (int i = 0; i < 40; i++) {
		uint64_t t = T(i * 100 + 10), run = (i < 30 ? base_us : spike_us) * 1000;

		ev_wakeup(&ev, t, 100, 101, 0, 0, 0, 0);
		ev_switch(&ev, t, 0, 0, 0, 0, 100, 101);
		if (i < 30) {
			ev_syscall(&ev, t + run - MS, MS, 100, 101, NR_PWRITE64, 4096, 3, 0, 4096);
			ev_switch(&ev, t + run, 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
			continue;
		}
		ev_switch(&ev, t + run, 0, 100, 101, PC_TASK_UNINTERRUPTIBLE, 0, 0);
		ev_block(&ev, t + run + 40 * MS, 0, 38 * MS, 100, 101, DEV_8_0, 1, 8, 4096);
		ev_wakeup(&ev, t + run + 40 * MS, 100, 101, 0, 0, 0, 0);
		ev_switch(&ev, t + run + 40 * MS, 0, 0, 0, 0, 100, 101);
		ev_syscall(&ev, t + run - MS, 42 * MS, 100, 101, NR_PWRITE64, 4096, 3, 0, 4096);
		ev_switch(&ev, t + run + 41 * MS, 0, 100, 101, PC_TASK_INTERRUPTIBLE, 0, 0);
	}
	return write_capture(dir, name, &ev);
}

/* A ratio alone does not make a verdict: the victim's CPU doubling from
 * 20 to 42 ms a window beside 400 ms more of I/O wait is "io"; from 200
 * to 410 ms, a third of what the spike added, it is "both". */
Test(diagnose, spike_verdict_weighs_what_each_side_added)
{
	char *dir = scratch_dir();
	char *small = spike_with_cpu(dir, "small.perfcap", 2000, 3200);
	char *large = spike_with_cpu(dir, "large.perfcap", 20000, 40000);
	char *a = report_json(small, NULL, NULL), *b = report_json(large, NULL, NULL);

	expect_json(dir, a, "d['diagnosis']['spike']['window_start_ns'] - 1000000000",
		    "3000000000");
	expect_json(dir, a, "d['diagnosis']['spike']['cpu_ratio'] >= 1.5", "True");
	expect_json(dir, a, "d['diagnosis']['spike']['verdict']", "io");
	expect_json(dir, b, "d['diagnosis']['spike']['cpu_ratio'] >= 1.5", "True");
	expect_json(dir, b, "d['diagnosis']['spike']['verdict']", "both");
	free(a);
	free(b);
	free(small);
	free(large);
	scratch_remove(dir);
}
