// Cache hints Swift has no spelling for.
#ifndef TAPE_CMEMORYHINTS_SHIM_H
#define TAPE_CMEMORYHINTS_SHIM_H
/// Asks for the cache line holding `address` to be loaded, without waiting for it: a loop that
/// visits rows in an order memory does not follow (a far checkout's 100,000 rows, hashed) asks
/// for the row it will visit a few steps ahead, so that the misses overlap instead of each
/// stalling the loop. Never faults, whatever the address.
static inline void tape_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif
