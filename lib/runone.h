/* SPDX-License-Identifier: MIT */
#ifndef PG_RUNONE_H
#define PG_RUNONE_H

/*
 * The run-one line protocol: how the controller's SSH dispatcher
 * (controller/ssh_disp.h) drives `perfgate-agent run-one` on a host that
 * runs no agent daemon.  Both ends include this file; it is the contract.
 *
 * Every message is one compact JSON object on one line ('\n'-terminated,
 * at most RUNONE_LINE_MAX bytes), with a "type".  Bytes that need not be
 * text (log chunks, mboxes) travel base64-encoded (lib/base64.h), so that
 * what the controller stores is byte for byte what the runner wrote.
 *
 * perfgate-agent run-one [--config F] [--work-dir D] [--spool-dir D]
 *                        [--runner R]
 *   stdin, first line: the lease answer {"job": {...}} (or the job object
 *   itself), exactly as POST /api/v1/lease gives it.
 *   stdout:
 *     {"type":"hello","agent_version":V,"pid":P,"pgid":G}     at once
 *     {"type":"heartbeat","job":J,"attempt":A,"stage":S,"progress":N}
 *                                  every heartbeat_s, the first at once
 *     {"type":"log","job":J,"attempt":A,"stage":S,"data":BASE64}
 *     {"type":"fetch","url":U}     the runner needs the series mbox
 *     {"type":"result","job":J,"attempt":A,"body":TEXT}
 *                                  TEXT: the exact bytes of POST
 *                                  /jobs/J/result, spooled before this
 *                                  line is written
 *     {"type":"end","exit":N,"detail":TEXT}   last line, when it can
 *   stdin, later lines:
 *     {"type":"cancel","reason":TEXT}     the controller cancelled it (or
 *                                  answered 409/404 to a heartbeat): stop,
 *                                  no result
 *     {"type":"mbox","data":BASE64} or {"type":"mbox","error":TEXT}
 *                                  the answer to a fetch
 *     {"type":"ack","job":J,"attempt":A,"status":"recorded"|"duplicate"|
 *                                  "acknowledged"}   remove the spooled result
 *     {"type":"reject","job":J,"attempt":A,"status":HTTP,"answer":TEXT}
 *                                  the controller refused it: move it to
 *                                  the spool's rejected/
 *   stdin's EOF (or a write to stdout failing) means the connection
 *   dropped: the lease is lost.  The job is stopped (its processes killed
 *   by process group), an infra-error result is spooled for the attempt
 *   ("the connection to the controller dropped..."), to be collected, and
 *   run-one exits RUNONE_EXIT_LOST.
 *
 * As implemented (agent/agent_runone.h):
 *   - the spool is locked for the whole run; a job run also waits up to
 *     RUNONE_COLLECT_WAIT_S for it, as --collect does;
 *   - SIGTERM, SIGINT and SIGHUP stop the job as a dropped connection
 *     does (infra-error spooled, RUNONE_EXIT_LOST); SIGPIPE is ignored;
 *   - a runner that had already finished when the connection dropped
 *     keeps its real result (spooled, not delivered), not infra-error;
 *   - a malformed line from the controller is logged and ignored; a line
 *     over RUNONE_LINE_MAX counts as the connection dropping; an ack or
 *     reject of another attempt than the result just sent is ignored;
 *   - stdin closing before the first line: RUNONE_EXIT_LOST; a first line
 *     that is not a job: RUNONE_EXIT_ERROR with an end line; a job that
 *     agent_job_parse() refuses but whose id and attempt are readable:
 *     its infra-error result goes out and is answered as any result,
 *     then RUNONE_EXIT_ERROR;
 *   - --log-level SPEC is accepted as by the daemon.
 *
 * perfgate-agent run-one --facts [--config F]
 *   {"type":"facts","agent_version":V,"labels":{...},"facts":{...}}: what a
 *   daemon registers with (its labels with vendor and arch filled in).
 *
 * perfgate-agent run-one --collect [--config F] [--spool-dir D]
 *   Takes the spool's lock (waiting up to RUNONE_COLLECT_WAIT_S for a
 *   run-one that is still stopping), turns job files without a result
 *   into infra-error results (as the daemon does at start), then writes
 *   one "result" line per spooled result, oldest first, and
 *   {"type":"collected","count":N}; then reads "ack"/"reject" lines until
 *   {"type":"done"} or EOF.  A result not acknowledged stays spooled.
 *   No hello or end line.  Exit 0 (whatever was acknowledged), 1 (the
 *   spool), 3 (stdout failed before the collected line).
 *
 * Exit statuses of run-one.
 */

#define RUNONE_EXIT_OK 0	/* the result was acknowledged, or the job
				 * was cancelled (nothing to deliver) */
#define RUNONE_EXIT_ERROR 1	/* a local failure (spool, configuration) */
#define RUNONE_EXIT_USAGE 2
#define RUNONE_EXIT_LOST 3	/* stdin closed before the end: the job was
				 * stopped; what was spooled is collected later */
#define RUNONE_EXIT_UNACKED 4	/* the result is spooled, no ack came within
				 * RUNONE_ACK_WAIT_S */

#define RUNONE_LINE_MAX ((size_t)512 * 1024 * 1024)	/* an mbox, base64 */
#define RUNONE_JOB_MAX ((size_t)16 * 1024 * 1024)	/* the first line */
#define RUNONE_ACK_WAIT_S 120
#define RUNONE_COLLECT_WAIT_S 60

/* Message types. */
#define RUNONE_HELLO "hello"
#define RUNONE_HEARTBEAT "heartbeat"
#define RUNONE_LOG "log"
#define RUNONE_FETCH "fetch"
#define RUNONE_RESULT "result"
#define RUNONE_END "end"
#define RUNONE_FACTS "facts"
#define RUNONE_COLLECTED "collected"
#define RUNONE_CANCEL "cancel"
#define RUNONE_MBOX "mbox"
#define RUNONE_ACK "ack"
#define RUNONE_REJECT "reject"
#define RUNONE_DONE "done"

#endif
