/* dump_main.h - the shared body of the e2e capture dumpers (block_check,
 * net_check): open a capture with the format library, hand every EVENTS
 * record to the caller's printer, print META and STATS pairs as
 * "meta KEY VALUE" / "stats KEY VALUE" lines for awk. */
#ifndef TESTS_E2E_DUMP_MAIN_H
#define TESTS_E2E_DUMP_MAIN_H

#include "perfcap_format.h"

/* Runs "NAME CAPTURE": returns the process exit status (2 usage, 1 an
 * unreadable capture, 0 otherwise). */
int dump_main(int argc, char **argv, const char *name,
	      void (*dump_record)(const struct pc_rec *rec));

#endif
