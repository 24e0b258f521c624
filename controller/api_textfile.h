/* SPDX-License-Identifier: MIT */
#ifndef CONTROLLER_API_TEXTFILE_H
#define CONTROLLER_API_TEXTFILE_H

/*
 * A text file from outside (a job's log, written by an agent from what
 * sandboxed builds and benchmarks printed) sent as an HTTP answer through
 * the sanitiser (lib/sanitize.h, block mode), streamed: the file on disk
 * stays as received, the answer is valid UTF-8 whose control bytes are
 * shown, not obeyed, by whatever terminal or page reads it.  UTF-8
 * sequences and CR LF pairs split by a read are carried to the next one,
 * so the answer is the same whatever the read size.
 */

#include <microhttpd.h>

/* The response for fd (open for reading; the response owns and closes it,
 * also when this fails).  NULL when out of memory. */
struct MHD_Response *api_textfile_response(int fd);

#endif
