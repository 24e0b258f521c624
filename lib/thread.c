/* SPDX-License-Identifier: MIT */
/* Naming threads (thread.h). */
#include "thread.h"

#include <sys/prctl.h>

void pg_thread_name(const char *name)
{
	/* PR_SET_NAME names the calling thread, not the process, and cuts
	 * the name to 15 bytes itself. */
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
}
