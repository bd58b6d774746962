/* command.c - what is being recorded: a command started by the recorder, or
 * existing processes given by pid.
 *
 * The command is forked first and held at a gate (a pipe it reads one byte
 * from) until its pid is in the targets map and sampling is attached, so
 * not one instruction of it runs unobserved. Under sudo it then becomes
 * the invoking user (SUDO_UID/SUDO_GID, with that user's groups). A second,
 * close-on-exec pipe reports a failed exec back to the recorder.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/procinfo.h"
#include "command.h"
#include "util/util.h"
#include "common/units.h"

/* ---- the command ------------------------------------------------------ */

static bool is_executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int command_resolve(const char *argv0, char *out, size_t len)
{
	const char *path_env = getenv("PATH");

	if (strchr(argv0, '/')) {
		snprintf(out, len, "%s", argv0);
		if (is_executable_file(argv0))
			return 0;
		return access(argv0, F_OK) ? -ENOENT : -EACCES;
	}
	if (!path_env)
		path_env = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path_env;; p++) {
		const char *end = strchrnul(p, ':');
		int dir_len = (int)(end - p);

		snprintf(out, len, "%.*s%s%s", dir_len, p, dir_len ? "/" : "", argv0);
		if (is_executable_file(out))
			return 0;
		if (!*end)
			break;
		p = end;
	}
	return -ENOENT;
}

int command_check_runnable(const char *argv0)
{
	char candidate[4096];

	return command_resolve(argv0, candidate, sizeof(candidate));
}

static void child_wait_and_exec(int gate_read, int error_write, char **argv,
				const struct run_identity *identity)
{
	char go;
	int err;

	if (read(gate_read, &go, 1) != 1)
		_exit(127); /* the recorder gave up before starting us */
	close(gate_read);
	err = -privileges_become(identity);
	if (!err) {
		execvp(argv[0], argv);
		err = errno;
	}
	if (write(error_write, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int command_spawn(struct command_child *c, char **argv, const struct run_identity *identity)
{
	int gate[2], exec_error[2];

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(exec_error, O_CLOEXEC)) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		return err;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		close(exec_error[0]);
		close(exec_error[1]);
		return err;
	}
	if (c->pid == 0) {
		close(gate[1]);
		close(exec_error[0]);
		child_wait_and_exec(gate[0], exec_error[1], argv, identity);
	}
	close(gate[0]);
	close(exec_error[1]);
	c->gate_fd = gate[1];
	c->exec_error_fd = exec_error[0];
	return 0;
}

int command_release(struct command_child *c)
{
	char go = 1;
	int child_errno = 0;
	ssize_t n;

	if (write(c->gate_fd, &go, 1) != 1)
		return -errno;
	close(c->gate_fd);
	c->gate_fd = -1;
	do {
		n = read(c->exec_error_fd, &child_errno, sizeof(child_errno));
	} while (n < 0 && errno == EINTR);
	close(c->exec_error_fd);
	c->exec_error_fd = -1;
	if (n == (ssize_t)sizeof(child_errno))
		return -child_errno;
	return 0;
}

static void reap(struct command_child *c, int options)
{
	int status;
	pid_t r;

	if (c->exited || c->pid <= 0)
		return;
	do {
		r = waitpid(c->pid, &status, options);
	} while (r < 0 && errno == EINTR);
	if (r == c->pid) {
		c->exited = true;
		c->wait_status = status;
	}
}

void command_cancel(struct command_child *c)
{
	if (c->pid <= 0)
		return;
	if (c->gate_fd >= 0)
		close(c->gate_fd);
	if (c->exec_error_fd >= 0)
		close(c->exec_error_fd);
	c->gate_fd = c->exec_error_fd = -1;
	reap(c, 0);
}

bool command_has_exited(struct command_child *c)
{
	reap(c, WNOHANG);
	return c->exited;
}

void command_stop(struct command_child *c, int sig, int timeout_ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };

	if (c->pid <= 0 || command_has_exited(c))
		return;
	kill(c->pid, sig);
	for (int waited = 0; waited < timeout_ms; waited += 10) {
		if (command_has_exited(c))
			return;
		nanosleep(&tick, NULL);
	}
}

const char *command_describe_exit(const struct command_child *c, char *buf, size_t len)
{
	int st = c->wait_status;

	if (!c->exited)
		snprintf(buf, len, "is still running (pid %d)", c->pid);
	else if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "ended with wait status 0x%x", st);
	return buf;
}

/* ---- pids ------------------------------------------------------------- */

/* The process (thread group) id of pid, from /proc/PID/status. */
static int read_tgid(pid_t pid, pid_t *tgid)
{
	char path[64], *text, *line;
	long len;
	int err = -EINVAL;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	len = read_whole_file(path, &text, 64 << 10);
	if (len < 0)
		return (int)len;
	line = strstr(text, "\nTgid:");
	if (line) {
		*tgid = (pid_t)strtol(line + 6, NULL, 10);
		err = *tgid > 0 ? 0 : -EINVAL;
	}
	free(text);
	return err;
}

static int add_unique_pid(pid_t **pids, size_t *npids, pid_t pid)
{
	pid_t *grown;

	for (size_t i = 0; i < *npids; i++) {
		if ((*pids)[i] == pid)
			return 0;
	}
	grown = realloc(*pids, (*npids + 1) * sizeof(**pids));
	if (!grown)
		return -ENOMEM;
	grown[(*npids)++] = pid;
	*pids = grown;
	return 0;
}

static int parse_one_pid(const char *word, pid_t *out)
{
	uint64_t value;
	pid_t tgid = 0;
	int err;

	if (!parse_u64_in_range(word, 1, 0x3fffffff, &value)) {
		error_line("invalid pid '%s': expected a positive number", word);
		return -EINVAL;
	}
	err = read_tgid((pid_t)value, &tgid);
	if (err == -ENOENT || !process_is_alive((pid_t)value)) {
		error_line("pid %s: no such process", word);
		return -ESRCH;
	}
	if (err) {
		error_line("pid %s: cannot read /proc/%s/status: %s", word, word, strerror(-err));
		return err;
	}
	if (tgid != (pid_t)value)
		warning_line("%s is a thread of process %d; recording process %d", word, tgid, tgid);
	*out = tgid;
	return 0;
}

/* Splits "1,2,3" into words; an empty word is an error. */
static int next_pid_word(const char **p, char *word, size_t len)
{
	size_t n = strcspn(*p, ",");

	if (n == 0 || n >= len)
		return -EINVAL;
	memcpy(word, *p, n);
	word[n] = '\0';
	*p += n;
	if (**p == ',')
		(*p)++;
	return 0;
}

int parse_pid_list(const char *arg, pid_t **pids, size_t *npids)
{
	const char *p = arg;
	int err = 0;

	*pids = NULL;
	*npids = 0;
	do {
		char word[32];
		pid_t pid;

		if (next_pid_word(&p, word, sizeof(word))) {
			error_line("invalid pid list '%s': expected PID[,PID...]", arg);
			err = -EINVAL;
			break;
		}
		err = parse_one_pid(word, &pid);
		if (!err)
			err = add_unique_pid(pids, npids, pid);
	} while (!err && *p);
	if (!err && arg[0] && arg[strlen(arg) - 1] == ',') {
		error_line("invalid pid list '%s': expected PID[,PID...]", arg);
		err = -EINVAL;
	}
	if (err) {
		free(*pids);
		*pids = NULL;
		*npids = 0;
	}
	return err;
}

bool process_is_alive(pid_t pid)
{
	struct proc_stat st;

	if (kill(pid, 0) && errno == ESRCH)
		return false;
	return procinfo_read_stat((uint32_t)pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}
