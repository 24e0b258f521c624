/* SPDX-License-Identifier: MIT */
#ifndef PG_RNG_H
#define PG_RNG_H

/*
 * A small deterministic random number generator for simulations (the
 * verdict's minimum detectable effect, bench/verdict_sim.c, the tests):
 * splitmix64, and normal values by Box-Muller.  Ours rather than libc's,
 * so that a seed gives the same figures with every libc and on every
 * machine.  Not for anything secret.  A struct pg_rng is one stream; it
 * is not shared between threads.
 */

#include <stdbool.h>
#include <stdint.h>

struct pg_rng {
	uint64_t s;
	double spare;		/* the second normal of a Box-Muller pair */
	bool has_spare;
};

#define PG_RNG_INIT(seed) { (seed), 0, false }

/* The next 64 random bits. */
uint64_t pg_rng_next(struct pg_rng *r);

/* Uniform in (0, 1): never 0 nor 1, so that log() of it is finite. */
double pg_rng_unit(struct pg_rng *r);

/* Standard normal. */
double pg_rng_normal(struct pg_rng *r);

#endif
