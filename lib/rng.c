/* SPDX-License-Identifier: MIT */
/* A deterministic generator for simulations: see rng.h. */
#include <math.h>

#include "rng.h"

uint64_t pg_rng_next(struct pg_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double pg_rng_unit(struct pg_rng *r)
{
	return ((double)(pg_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double pg_rng_normal(struct pg_rng *r)
{
	double rad, ang;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	rad = sqrt(-2.0 * log(pg_rng_unit(r)));
	ang = 2.0 * M_PI * pg_rng_unit(r);
	r->spare = rad * sin(ang);
	r->has_spare = true;
	return rad * cos(ang);
}
