/* loopback.h - the listening socket the network workloads share: a TCP
 * socket on 127.0.0.1, an ephemeral port, written to PORTFILE whole (by
 * rename) once it listens, so a test can wait for the file. */
#ifndef WORKLOADS_LOOPBACK_H
#define WORKLOADS_LOOPBACK_H

/* The listening fd; exits with a message on failure. */
int loopback_listen(const char *portfile, int backlog);

#endif
