/*
 * nodelay.h - sending small messages on the process's TCP sockets without
 * waiting (TCP_NODELAY).  Not collective; no global state.
 */
#ifndef PIPER_NODELAY_H
#define PIPER_NODELAY_H

/* Sets TCP_NODELAY on every TCP socket among the open descriptors that the
 * directory fd_dir lists by number (the process's own: "/proc/self/fd"):
 * the socket then sends a short message at once instead of holding it
 * until the peer acknowledges the previous one (Nagle's algorithm), which
 * a peer that delays its acknowledgements makes a wait of some 40 ms on
 * Linux.  Descriptors that are not TCP sockets (files, pipes, Unix
 * sockets) and entries that are not numbers are left alone.  Returns the
 * number of sockets set, or -1 if fd_dir cannot be read (nothing set).
 * Allocates nothing that outlives the call. */
int pp_tcp_nodelay_all(const char *fd_dir);

#endif /* PIPER_NODELAY_H */
