/* record_names.c - record type names and sources (see record_names.h). */
#include "perfcap_format.h"
#include "record_names.h"

static const struct {
	const char *name;
	const char *source;
} types[RECORD_TYPE_MAX + 1] = {
	[PC_REC_SAMPLE] = { "sample", "cpu" },
	[PC_REC_STACK] = { "stack", NULL },
	[PC_REC_PROC] = { "proc", NULL },
	[PC_REC_THREAD] = { "thread", NULL },
	[PC_REC_MAP] = { "map", NULL },
	[PC_REC_MODULE] = { "module", NULL },
	[PC_REC_EXEC] = { "exec", "proc" },
	[PC_REC_EXIT] = { "exit", "proc" },
	[PC_REC_SWITCH] = { "switch", "sched" },
	[PC_REC_WAKEUP] = { "wakeup", "sched" },
	[PC_REC_OFFCPU] = { "offcpu", "sched" },
	[PC_REC_FORK] = { "fork", "sched" },
	[PC_REC_SYSCALL] = { "syscall", "syscall" },
	[PC_REC_BLOCK] = { "block", "block" },
	[PC_REC_SOCKET] = { "socket", "net" },
	[PC_REC_TCP_STATE] = { "tcp_state", "net" },
	[PC_REC_TCP_RETRANS] = { "tcp_retrans", "net" },
	[PC_REC_LOCK] = { "lock", "lock" },
	[PC_REC_MUTEX] = { "mutex", "lock" },
	[PC_REC_FAULT] = { "fault", "mem" },
};

const char *record_type_name(uint16_t type)
{
	return type <= RECORD_TYPE_MAX ? types[type].name : NULL;
}

const char *record_type_source(uint16_t type)
{
	return type <= RECORD_TYPE_MAX ? types[type].source : NULL;
}
