/* request_pace.h - the req windows' pace from the connections' byte
 * streams (request_pace.c): request_windows.pace, and its weight
 * multiplied by it. */
#ifndef ANALYZE_REQUEST_PACE_H
#define ANALYZE_REQUEST_PACE_H

#include <sqlite3.h>

/* After request_windows and requests are written. 0 or -1. */
int request_pace_build(sqlite3 *db);

#endif /* ANALYZE_REQUEST_PACE_H */
