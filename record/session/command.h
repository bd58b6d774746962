/* command.h - what is being recorded: a command started by the recorder
 * (held at a gate until sampling is attached), or existing processes given
 * by pid. */
#ifndef RECORD_COMMAND_H
#define RECORD_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "privileges.h"

struct command_child {
	pid_t pid;
	int   gate_fd;        /* write end: one byte lets the child exec */
	int   exec_error_fd;  /* read end: errno if exec failed, EOF if it ran */
	bool  exited;
	int   wait_status;    /* from waitpid once exited */
};

/* The file execvp(argv0) would run (PATH search), into out. 0, or
 * -ENOENT / -EACCES. */
int command_resolve(const char *argv0, char *out, size_t len);

/* Checks that argv0 can be executed (PATH search like execvp). 0, or
 * -ENOENT / -EACCES ... */
int command_check_runnable(const char *argv0);

/* Forks the child; it waits at the gate, takes on identity (the invoking
 * user under sudo), then calls execvp(argv). */
int command_spawn(struct command_child *c, char **argv, const struct run_identity *identity);

/* Opens the gate. Returns 0 once the command runs, or -errno from its
 * failed identity change or exec (the child then exits 127). */
int command_release(struct command_child *c);

/* Closes the gate without running the command, and reaps the child. */
void command_cancel(struct command_child *c);

/* True once the child has exited (non-blocking; reaps it). */
bool command_has_exited(struct command_child *c);

/* Sends sig, then waits up to timeout_ms for the child to exit. */
void command_stop(struct command_child *c, int sig, int timeout_ms);

/* "exited with status 0" / "was killed by signal 9 (Killed)". */
const char *command_describe_exit(const struct command_child *c, char *buf, size_t len);

/* Parses "PID[,PID...]" and checks each process exists. Prints one error
 * line and returns -errno on failure; *pids is malloc'd. A thread id is
 * replaced by its process id (with a warning). Duplicates are dropped. */
int parse_pid_list(const char *arg, pid_t **pids, size_t *npids);

/* True while the process exists and is not a zombie. */
bool process_is_alive(pid_t pid);

#endif /* RECORD_COMMAND_H */
