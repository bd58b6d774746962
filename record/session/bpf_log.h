/* bpf_log.h - captures libbpf's messages instead of letting them spill on
 * the terminal: with -v they are printed as they come, otherwise kept so a
 * failure can be summarized in one line. */
#ifndef RECORD_BPF_LOG_H
#define RECORD_BPF_LOG_H

#include <stddef.h>

/* Installs the capture (libbpf_set_print). */
void bpf_log_capture(void);

/* Forgets what was captured so far (before each source's load/attach, so
 * a failure is summarized with its own messages). */
void bpf_log_reset(void);

/* The most telling line of what libbpf said (the first one reporting a
 * failure, else the last one), without the "libbpf: " prefix, or "" . */
const char *bpf_log_summary(char *buf, size_t len);

#endif /* RECORD_BPF_LOG_H */
