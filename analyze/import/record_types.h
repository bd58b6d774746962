/* record_types.h - the record types perfcap-analyze knows (format/SPEC.md
 * 2.2): their short names, as info prints them and as the quality table
 * keys them ("records.NAME"), and the event source each belongs to. One
 * table in record_types.c holds everything about a type (name, source,
 * size, decoder, table and columns); this is its public face. */
#ifndef ANALYZE_IMPORT_RECORD_TYPES_H
#define ANALYZE_IMPORT_RECORD_TYPES_H

#include <stdint.h>

#define RECORD_TYPE_MAX 33   /* known types are 1..RECORD_TYPE_MAX */

/* "sample", "stack", ... "fault"; NULL for an unknown type. */
const char *record_type_name(uint16_t type);

/* The recorder source that writes it: "cpu", "proc" (EXEC, EXIT), "sched",
 * "syscall", "block", "net", "lock", "mem", "probe"; NULL for the process, map,
 * stack and symbol records of PROCS, STACKS and SYMBOLS chunks. */
const char *record_type_source(uint16_t type);

#endif /* ANALYZE_IMPORT_RECORD_TYPES_H */
