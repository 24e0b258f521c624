#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A fake Patchwork server for perfgate's tests (Python 3 standard library only).

It answers the parts of the Patchwork REST API (v3.1.x, API 1.0 to 1.3) and of
its web mbox downloads that perfgate uses, with the shapes, status codes and
quirks recorded in shared/reference/patchwork_publicinbox.md section 1.  Where
the reference says "[verified]", the fake copies that behaviour exactly.

Usage:
    fake_patchwork.py [--port N] [--fixture FILE] [--quiet]

It binds 127.0.0.1 (port 0 = any free port), prints "listening on PORT" as
its first line on stdout (flushed), logs one line per request on stderr
(unless --quiet), and exits 0 on SIGTERM or SIGINT.  Requests are served on
threads, so a request told to hang does not stop the others.

URLs in bodies and headers are absolute and use the Host header of the
request, as Django's build_absolute_uri() does.

REST API (prefix /api/1.3/; also /api/1.0/ to /api/1.2/, and /api/ meaning
the latest, 1.3; any other version is a 404 HTML page)
------------------------------------------------------------------------------
GET  /api/V/                        index of the resources
GET  /api/V/projects/               list; /projects/{id or link_name}/ detail
GET  /api/V/events/                 filters project (id or link_name), category
                                    (one; the last one wins when repeated),
                                    series, patch, cover, actor, since, before
                                    (naive ISO 8601, since inclusive, before
                                    exclusive); order=date or -date (default
                                    -date; others ignored).  Comment events
                                    appear only for API >= 1.3.
GET  /api/V/series/                 list (filters project, submitter, since,
                                    before); /series/{id}/ detail: patches
                                    ordered by date, cover_letter or null,
                                    name null until patch 1 or the cover came
GET  /api/V/patches/                list (filters project, series, state,
                                    archived, msgid (without <>), hash,
                                    submitter, since, before)
GET  /api/V/patches/{id}/           detail: headers, content, diff, prefixes,
                                    mbox URL, series list, aggregate check
GET  /api/V/covers/ and /covers/{id}/
GET  /api/V/patches/{id}/comments/  (1.1+), /covers/{id}/comments/ (1.1+)
GET  /api/V/patches/{id}/comments/{cid}/, /covers/{id}/comments/{cid}/ (1.3;
                                    comments carry no "url", and "addressed"
                                    from 1.3: null unless the mail had
                                    X-Patchwork-Action-Required)
GET  /api/V/patches/{id}/checks/    list (filters user (id or username), state
                                    (the model's numbers 0-3, as Django's
                                    ChoiceFilter over integer choices wants),
                                    context, since, before)
GET  /api/V/patches/{id}/checks/{cid}/
POST /api/V/patches/{id}/checks/    create a check (see below)
PUT, PATCH, DELETE on a check       405 (checks are immutable)
GET  /api/V/people/{id}/, /api/V/users/{id}/

Lists are paged like patchwork's LinkHeaderPagination: page (default 1),
per_page (default 30, capped at 250; 0, negative or junk means 30), a bare
JSON array, and a Link header "<next>; rel="next", <prev>; rel="prev",
<first>; rel="first", <last>; rel="last"" whose URLs are the request URL
with the page replaced and the query sorted (DRF's replace_query_param; the
link to page 1 from page 2 drops the page, as DRF's get_previous_link does).
A page past the end, or not a positive number, is 404 {"detail":"Invalid
page."}.

Filters behave like django-filter behind patchwork's DjangoFilterBackend: an
invalid value (unknown project or category, non-numeric id, unparsable or
date-only since) answers 200 [], unknown parameters are ignored, and an empty
value means no filter.  A since/before with a time zone ("Z", "+00:00")
answers HTTP 500 with Django's HTML error page, as the real server on SQLite
does with USE_TZ = False.

Authentication (every /api/ request, GET included, as DRF authenticates
before anything else): "Authorization: Token KEY" or Basic user:password.
Failures answer 403, never 401 (SessionAuthentication comes first):
{"detail":"Invalid token."}, "Invalid token header. No credentials
provided.", "Invalid token header. Token string should not contain
spaces.", "Invalid username/password.".

Creating a check, in patchwork's order: authentication (403 above); the patch
(404 {"detail":"Not found."}); permission: the user maintains the project
(fixture "maintainer_of"), is the patch's delegate, or is the submitter's
linked user, else 403 {"detail":"You do not have permission to perform this
action."}; then the body: application/json, or
application/x-www-form-urlencoded (fields absent from a form are null); no
Content-Type reads as an empty body; other types 415.  Validation as
patchwork's CheckSerializer: state missing or "" alone gives
{"state":["A check must have a state."]}; a label other than
pending/success/warning/fail gives {"state":["\"failure\" is not a valid
choice."]} (the numbers 0-3 are accepted too); context must be a slug
(^[-a-zA-Z0-9_]+$, at most 255, default "default"); target_url a URL of at
most 200 characters ("Ensure this field has no more than 200 characters.",
"Enter a valid URL."); description free text; all field errors in one body.
201 with the check and a Location header; a check-created event is added.
Checks are never replaced: a second POST with the same context is a new
check, and the patch's aggregate "check" counts the newest per (user,
context).

Web URLs (mbox downloads and friends)
-------------------------------------
GET /patch/{id}/mbox/             302, relative Location
                                  /project/{link}/patch/{msgid}/mbox/ (query
                                  string dropped)
GET /project/{link}/patch/{msgid}/mbox/
                                  200 text/plain; the patch in patchwork's
                                  mbox form ("From patchwork <ctime>",
                                  X-Patchwork-Submitter, X-Patchwork-Id, the
                                  mail's headers except Content-Type and
                                  Content-Transfer-Encoding, refolded by
                                  Python's email package as patchwork's are:
                                  a long Message-Id moves to a continuation
                                  line; body = commit message + review tags
                                  from comments + "---" notes, then the text
                                  that followed the diff (patchwork keeps
                                  every non-diff line as content, up to the
                                  signature), then the diff).  ?series=* or
                                  ?series=ID adds
                                  the lower-numbered patches of its series,
                                  by number (404 when not in that series)
GET /patch/{id}/raw/, /project/{link}/patch/{msgid}/raw/   the diff only
GET /series/{id}/mbox/            the series' patches by number, cover letter
                                  NOT included, joined with "\\n"
GET /cover/{id}/mbox/             302 to /project/{link}/cover/{msgid}/mbox/
GET /project/{link}/patch/{msgid}/, /project/{link}/cover/{msgid}/,
    /project/{link}/list/         small HTML pages (web_url targets)
Message-IDs in URLs are without <> and with "/" as %2F.  No ">From "
escaping is ever applied: a body line "From ..." is served verbatim.
Django's APPEND_SLASH: a known path without its trailing slash is a 301.

Control endpoints (not Patchwork; for tests)
--------------------------------------------
POST /_fake/series    {"project": "dpdk", "series": ID (add to an existing
                      series; omitted: a new one), "mails": [{"file": PATH
                      (relative to the fixture's directory or absolute) or
                      "text": RAW MAIL, "date": naive ISO (overrides Date:),
                      "id": N (patch or cover id)}], "events": true}
                      Mails are taken in order as patchwork receives them: a
                      mail numbered 0/N without a diff is the cover letter,
                      others are patches.  Events are created as patchwork's
                      signals do (series-created, cover-created,
                      patch-created, patch-completed for the patch and its
                      now-complete successors, series-completed each time a
                      patch arrives and received_total >= total), dated now.
                      Answers {"series": ID, "cover": ID|null, "patches":
                      [ids], "events": [ids]}.
POST /_fake/comments  {"patch": ID or "cover": ID, "file"|"text": RAW MAIL,
                      "date": ..., "id": N, "event": true}: a reply, with
                      its patch-/cover-comment-created event.
POST /_fake/events    {"events": [{"category": C, "date": naive ISO (default
                      now), "series"/"patch"/"cover"/"comment"/"check": ID,
                      "actor": USER ID, "id": N}]}: append events as given
                      (e.g. a repeated series-completed).
POST /_fake/fail      {"count": N (default 1), "status": 500|503|..., "hang":
                      SECONDS, "drop": true, "lost_reply": true, "method":
                      "POST", "path": PREFIX, "retry_after": "120", "body":
                      TEXT, "for_s": SECONDS}: the next N matching requests
                      (control ones never match) sleep `hang` seconds, then
                      close the connection without an answer (drop), answer
                      `status`, are served in full with the answer thrown
                      away and the connection closed (lost_reply: the check
                      is created, the client never hears of it), are
                      served in full with the body of the answer cut in
                      half ("garble": true; JSON that does not parse, the
                      status kept), or, with none of these, are served
                      normally (with a hang longer than the client's
                      timeout: a reply lost after the work was done,
                      later).  With for_s the rule holds
                      for every matching request during that many seconds
                      from now, whatever the count (an outage).  Rules
                      stack; the first matching one that holds is used.
POST /_fake/reset     forget the request log, the counters and the fail rules
GET  /_fake/checks    {"checks": [every check, with "patch" and "user" ids,
                      in creation order], "posts": {"total": N, "by_status":
                      {"201": N, ...}}, "requests": N}
GET  /_fake/requests  the request log: [{"method", "path", "query",
                      "content_type", "authorization" (the scheme only),
                      "body" (first 4 KiB), "status", "lost_reply" (only
                      when true)}] (last 1000)

Fixture (JSON, all keys optional)
---------------------------------
{
  "projects": [{"id": 1, "name": "DPDK", "link_name": "dpdk", "list_id":
                "dev.dpdk.org", "list_email": "dev@dpdk.org", ...}],
  "users": [{"id": 1, "username": "ci", "email": "ci@example.org",
             "token": "40 hex", "password": "...", "maintainer_of":
             ["dpdk"]}],
  "people": [{"id": 1, "name": "Alice", "email": "a@x", "user": 1}],
  "series": [{"id": 1, "project": "dpdk", "events": true,
              "mails": [{"file": "...", "date": "...", "id": 1,
                         "received": "naive ISO: when patchwork got it (the
                         date of its events)", "delegate": USER ID,
                         "state": "new"}]}],
  "comments": [{"patch": ID | "cover": ID, "file"|"text": ..., "id": N,
                "received": "...", "event": true}],
  "events": [{"category": ..., "date": ..., ...}],
  "checks": [{"patch": ID, "user": ID, "state": "success", "context": ...,
              "description": ..., "target_url": ..., "date": ...}]
}
A project defaults to patches.dpdk.org's DPDK one (id 1, link_name dpdk).
People are created from the mails' From: headers when not listed.  Fixture
events get the "received" date of their mail (default: the mail's date),
one microsecond apart.

Left out
--------
Session (cookie) authentication, writing anything but checks (PATCH of
patches, bundles, maintainer notes), bundles, projects' show_dependencies and
series dependencies (API 1.4), the "q" search parameter, ordering of lists
other than events, the HTML web UI (only placeholder pages), the exact
patchwork diff hash (a SHA-1 of the diff stands in), DMARC From: rewriting
in mboxes, and thread-based grouping of mails into series (the test says
which series a mail joins).  The shape of the comment object embedded in
comment events (id, url, web_url, msgid, list_archive_url, date, name) is
patchwork's embedded serializer as best known; the reference does not show
it.
"""

import argparse
import base64
import datetime
import email.encoders
import email.errors
import email.header
import email.mime.nonmultipart
import email.parser
import email.policy
import email.utils
import hashlib
import http.server
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import urllib.parse

API_VERSIONS = ('1.0', '1.1', '1.2', '1.3')
LATEST = '1.3'
PER_PAGE_DEFAULT = 30
PER_PAGE_MAX = 250

CATEGORIES = (
    'cover-created', 'patch-created', 'patch-completed',
    'patch-state-changed', 'patch-delegated', 'patch-relation-changed',
    'check-created', 'series-created', 'series-completed',
    'cover-comment-created', 'patch-comment-created',
)
COMMENT_CATEGORIES = ('cover-comment-created', 'patch-comment-created')
# Payload keys per category (patchwork/api/event.py _category_map, after
# the renames created_check -> check, *_comment -> comment).
PAYLOAD_KEYS = {
    'cover-created': ('cover',),
    'patch-created': ('patch',),
    'patch-completed': ('patch', 'series'),
    'patch-state-changed': ('patch', 'previous_state', 'current_state'),
    'patch-delegated': ('patch', 'previous_delegate', 'current_delegate'),
    'patch-relation-changed': ('patch', 'previous_relation',
                               'current_relation'),
    'check-created': ('patch', 'check'),
    'series-created': ('series',),
    'series-completed': ('series',),
    'cover-comment-created': ('cover', 'comment'),
    'patch-comment-created': ('patch', 'comment'),
}

CHECK_STATES = ('pending', 'success', 'warning', 'fail')
SLUG_RE = re.compile(r'^[-a-zA-Z0-9_]+\Z')
CHECKS_PATH_RE = re.compile(r'^/api/(?:\d+\.\d+/)?patches/[^/]+/checks/\Z')
# django.utils.dateparse.datetime_re (Django 3.2), used by django-filter's
# IsoDateTimeFilter.
DJANGO_DATETIME_RE = re.compile(
    r'(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})'
    r'[T ](?P<hour>\d{1,2}):(?P<minute>\d{1,2})'
    r'(?::(?P<second>\d{1,2})(?:[\.,](?P<microsecond>\d{1,6})\d{0,6})?)?'
    r'\s*(?P<tzinfo>Z|[+-]\d{2}(?::?\d{2})?)?$')
TAG_RE = re.compile(
    r'^(Tested|Reviewed|Acked|Signed-off|Nacked|Reported)-by:.*$',
    re.M | re.I)

DEFAULT_PROJECT = {
    'id': 1, 'name': 'DPDK', 'link_name': 'dpdk',
    'list_id': 'dev.dpdk.org', 'list_email': 'dev@dpdk.org',
    'web_url': 'http://core.dpdk.org', 'scm_url': 'git://dpdk.org/dpdk',
    'webscm_url': 'http://git.dpdk.org/dpdk', 'subject_match': '',
    'list_archive_url': 'https://inbox.dpdk.org/dev',
    'list_archive_url_format': 'https://inbox.dpdk.org/dev/{}',
    'commit_url_format': '',
}

HTML_404 = ('<!doctype html>\n<html lang="en">\n<head>\n'
            '  <title>Not Found</title>\n</head>\n<body>\n'
            '  <h1>Not Found</h1><p>The requested resource was not found '
            'on this server.</p>\n</body>\n</html>\n')
HTML_500 = ('<!doctype html>\n<html lang="en">\n<head>\n'
            '  <title>Server Error (500)</title>\n</head>\n<body>\n'
            '  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n')

MSG_NO_PERMISSION = 'You do not have permission to perform this action.'


class HTTPError(Exception):
    """An answer other than 2xx, raised from deep inside a handler."""

    def __init__(self, status, body, content_type='application/json',
                 headers=None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}


def json_error(status, detail):
    return HTTPError(status, {'detail': detail})


def not_found_api():
    return json_error(404, 'Not found.')


def not_found_html():
    return HTTPError(404, HTML_404, 'text/html')


class InvalidFilter(Exception):
    """A filter value django-filter would reject: the list is empty."""


def now_naive():
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def fmt_date(d):
    """DRF's DateTimeField output for a naive datetime."""
    return d.isoformat() if d is not None else None


def parse_naive(value, what):
    """A fixture or control date: naive ISO 8601 only."""
    try:
        d = datetime.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError('%s: not a naive ISO 8601 date: %r' % (what, value))
    if d.tzinfo is not None:
        raise ValueError('%s: must be naive (UTC, no zone): %r' % (what, value))
    return d


def parse_filter_datetime(value):
    """since/before as patchwork parses them; aware values are the 500."""
    m = DJANGO_DATETIME_RE.match(value)
    if not m:
        raise InvalidFilter()
    kw = m.groupdict()
    tz = kw.pop('tzinfo')
    if kw['microsecond']:
        kw['microsecond'] = kw['microsecond'].ljust(6, '0')
    try:
        d = datetime.datetime(**{k: int(v) for k, v in kw.items()
                                 if v is not None})
    except ValueError:
        raise InvalidFilter()
    if tz is not None:
        # "SQLite backend does not support timezone-aware datetimes when
        # USE_TZ is False."
        raise HTTPError(500, HTML_500, 'text/html')
    return d


def version_at_least(ver, want):
    return tuple(int(x) for x in ver.split('.')) >= \
        tuple(int(x) for x in want.split('.'))


def drop_versioned(data, ver, fields):
    """BaseHyperlinkedModelSerializer: drop fields newer than the request."""
    for since, names in fields.items():
        if not version_at_least(ver, since):
            for n in names:
                data.pop(n, None)
    return data


def encoded_msgid(msgid):
    """Message-ID for URLs: no <>, '/' as %2F (patchwork's encoded_msgid)."""
    return urllib.parse.quote(msgid.strip('<>'), safe='@:+=!$&\'()*,;~.-_')


def decode_header_value(value):
    if value is None:
        return ''
    try:
        return str(email.header.make_header(
            email.header.decode_header(str(value))))
    except (UnicodeDecodeError, LookupError, email.errors.HeaderParseError):
        return str(value)


def normalise_space(s):
    return re.sub(r'\s+', ' ', s).strip()


def clean_subject(subject, drop_prefixes):
    """patchwork parser.clean_subject + split_prefixes."""
    drop = [p.lower() for p in drop_prefixes] + ['patch']
    subject = re.sub(r'^(re|fwd?)[:\s]\s*', ' ', subject, flags=re.I)
    subject = normalise_space(subject)
    prefixes = []
    m = re.match(r'^\[([^\]]*)\]\s*(.*)$', subject)
    while m:
        prefixes += [p for p in re.split(r'[,\s]+', m.group(1))
                     if p != '' and p.lower() not in drop]
        subject = m.group(2)
        m = re.match(r'^\[([^\]]*)\]\s*(.*)$', subject)
    subject = normalise_space(subject)
    bare = subject
    if prefixes:
        subject = '[%s] %s' % (','.join(prefixes), subject)
    return subject, bare, prefixes


def parse_series_marker(prefixes):
    for p in prefixes:
        m = re.match(r'^([0-9]+)/([0-9]+)$', p)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None, None


def parse_version(subject, prefixes):
    for p in prefixes:
        m = re.match(r'^[vV](\d+)$', p)
        if m:
            return int(m.group(1))
    m = re.search(r'\([vV](\d+)\)', subject)
    if m:
        return int(m.group(1))
    return 1


def split_mail(raw):
    """Raw mail text -> (header text, body text), without a From_ line."""
    raw = raw.replace('\r\n', '\n')
    if raw.startswith('From '):
        raw = raw.split('\n', 1)[1] if '\n' in raw else ''
    if '\n\n' in raw:
        head, body = raw.split('\n\n', 1)
    else:
        head, body = raw, ''
    return head + '\n', body


SIGNATURE_RE = re.compile(r'^(-- |_+)\n.*', re.S | re.M)
HUNK_RE = re.compile(r'^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@')
# git diff's extended header lines (patchwork's EXTENDED_HEADER_LINES).
EXTENDED_HEADERS = ('old mode ', 'new mode ', 'deleted file mode ',
                    'new file mode ', 'copy from ', 'copy to ',
                    'rename from ', 'rename to ', 'similarity index ',
                    'dissimilarity index ', 'index ')


def clean_content(text):
    """patchwork parser.py clean_content: nothing from a signature ("-- ")
    or list footer (a line of "_") on, stripped."""
    return SIGNATURE_RE.sub('', text).strip()


def parse_patch(text):
    """patchwork parser.py parse_patch: (diff, comment).  File headers and
    hunks (counted by their @@ line counts) go to the diff; every other
    line to the comment, in order, so text after the diff (git's
    base-commit, a Depends-on) lands after the message and the notes.
    Header lines not followed by a hunk are held and, at the end, given to
    the comment."""
    diff, comment, held = [], [], []
    state = 'text'      # text, header, minus, plus, hunk, meta
    counts = [0, 0]
    hunks = 0
    for line in text.split('\n'):
        line += '\n'
        if state == 'text':
            if line.startswith('diff ') or line.startswith('Index: '):
                state = 'header'
                held.append(line)
            elif line.startswith('--- '):
                state = 'minus'
                held.append(line)
            else:
                comment.append(line)
        elif state == 'header':
            held.append(line)
            if line.startswith('--- '):
                state = 'minus'
            if line.startswith(EXTENDED_HEADERS):
                state = 'meta'
        elif state == 'minus':
            if line.startswith('+++ '):
                state = 'plus'
                held.append(line)
            elif hunks:
                state = 'header'
                held.append(line)
            else:
                state = 'text'
                comment.extend(held + [line])
                held = []
        elif state == 'plus':
            m = HUNK_RE.match(line)
            if m:
                counts = [int(x) if x else 1 for x in m.groups()]
                state = 'hunk'
                diff.extend(held + [line])
                held = []
            elif line.startswith('--- '):
                diff.extend(held + [line])
                held = []
                state = 'minus'
            elif hunks and line.startswith('\\ No newline at end of file'):
                diff.append(line)
            elif hunks:
                state = 'header'
                held.append(line)
            else:
                state = 'text'
                comment.extend(held + [line])
                held = []
        elif state == 'hunk':
            if line.startswith('-'):
                counts[0] -= 1
            elif line.startswith('+'):
                counts[1] -= 1
            elif not line.startswith('\\ No newline at end of file'):
                counts[0] -= 1
                counts[1] -= 1
            diff.append(line)
            if counts[0] <= 0 and counts[1] <= 0:
                state = 'plus'
                hunks += 1
        else:   # meta: extended header lines of a git diff
            if line.startswith(EXTENDED_HEADERS):
                diff.extend(held + [line])
                held = []
            elif line.startswith('--- '):
                diff.extend(held + [line])
                held = []
                state = 'minus'
            else:
                held.append(line)
                state = 'header'
    comment.extend(held)
    return ''.join(diff), ''.join(comment)


def split_content_diff(body):
    """What patchwork keeps of a patch mail's text part: the diff, and as
    content every other line (the message, the notes, and whatever follows
    the diff) up to the signature (find_patch_content)."""
    diff, comment = parse_patch(body)
    content = clean_content(comment.strip() + '\n') if comment else ''
    return content, diff


class Mail:
    """What patchwork keeps of a received mail."""

    def __init__(self, raw, date_override=None):
        head, body = split_mail(raw)
        msg = email.parser.Parser(policy=email.policy.compat32).parsestr(
            head, headersonly=True)
        self.head = head
        self.body = body
        self.msg = msg
        msgid = (msg.get('Message-ID') or msg.get('Message-Id') or '').strip()
        if not msgid:
            raise ValueError('mail without a Message-ID')
        if not msgid.startswith('<'):
            msgid = '<%s>' % msgid
        self.msgid = msgid
        self.subject = normalise_space(decode_header_value(msg.get('Subject')))
        name, addr = email.utils.parseaddr(
            decode_header_value(msg.get('From', '')))
        self.from_name = name or addr
        self.from_email = addr
        if date_override is not None:
            self.date = date_override
        else:
            self.date = None
            try:
                d = email.utils.parsedate_to_datetime(msg.get('Date', ''))
                if d.tzinfo is not None:
                    d = d.astimezone(datetime.timezone.utc).replace(
                        tzinfo=None)
                self.date = d.replace(microsecond=0)
            except (TypeError, ValueError, IndexError):
                pass
            if self.date is None:
                self.date = now_naive().replace(microsecond=0)
        self.content, self.diff = split_content_diff(body)

    def headers_json(self):
        """The patch detail's "headers": a string per header, a list when
        repeated (folding kept)."""
        out = {}
        for key in self.msg.keys():
            if key in out:
                continue
            vals = [str(v) for v in self.msg.get_all(key)]
            out[key] = vals[0] if len(vals) == 1 else vals
        return out


class State:
    """Everything the fake knows; one lock guards it all."""

    def __init__(self, fixture_path):
        self.lock = threading.RLock()
        self.base_dir = os.getcwd()
        self.projects = []
        self.users = {}
        self.people = {}
        self.series = {}
        self.patches = {}
        self.covers = {}
        self.patch_comments = {}
        self.cover_comments = {}
        self.checks = {}
        self.check_order = []
        self.events = []
        self.next_ids = {}
        self.last_event_date = None
        self.reset_counters()
        if fixture_path:
            self.base_dir = os.path.dirname(os.path.abspath(fixture_path))
            with open(fixture_path, encoding='utf-8') as f:
                self.load(json.load(f))
        if not self.projects:
            self.projects.append(dict(DEFAULT_PROJECT))

    def reset_counters(self):
        self.request_log = []
        self.requests_total = 0
        self.check_posts = 0
        self.check_posts_by_status = {}
        self.fail_rules = []

    # ids -------------------------------------------------------------

    def new_id(self, kind, table, wanted=None):
        if wanted is not None:
            wanted = int(wanted)
            if wanted in table:
                raise ValueError('%s id %d already exists' % (kind, wanted))
            self.next_ids[kind] = max(self.next_ids.get(kind, 1), wanted + 1)
            return wanted
        n = self.next_ids.get(kind, 1)
        while n in table:
            n += 1
        self.next_ids[kind] = n + 1
        return n

    # loading ---------------------------------------------------------

    def load(self, fx):
        for p in fx.get('projects', []):
            proj = dict(DEFAULT_PROJECT)
            proj.update(p)
            self.projects.append(proj)
        if not self.projects:
            self.projects.append(dict(DEFAULT_PROJECT))
        for u in fx.get('users', []):
            user = {'id': int(u['id']), 'username': u['username'],
                    'first_name': u.get('first_name', ''),
                    'last_name': u.get('last_name', ''),
                    'email': u.get('email', ''),
                    'token': u.get('token'), 'password': u.get('password'),
                    'active': u.get('active', True),
                    'maintainer_of': [str(x) for x in
                                      u.get('maintainer_of', [])]}
            self.users[user['id']] = user
        for p in fx.get('people', []):
            self.people[int(p['id'])] = {
                'id': int(p['id']), 'name': p.get('name', ''),
                'email': p['email'], 'user': p.get('user')}
        for s in fx.get('series', []):
            project = self.find_project(s.get('project', self.projects[0]
                                              ['link_name']))
            if project is None:
                raise ValueError('series %r: unknown project' % s.get('id'))
            events = s.get('events', True)
            series_id = s.get('id')
            for m in s.get('mails', []):
                raw = self.mail_text(m)
                date = parse_naive(m['date'], 'mail date') \
                    if 'date' in m else None
                mail = Mail(raw, date)
                received = parse_naive(m['received'], 'received') \
                    if 'received' in m else mail.date
                res = self.add_mail(project, series_id, mail, m.get('id'),
                                    events, received, m)
                series_id = res['series']
        for c in fx.get('comments', []):
            raw = self.mail_text(c)
            date = parse_naive(c['date'], 'comment date') \
                if 'date' in c else None
            mail = Mail(raw, date)
            received = parse_naive(c['received'], 'received') \
                if 'received' in c else mail.date
            self.add_comment(c, mail, c.get('event', True), received)
        for e in fx.get('events', []):
            self.add_event_spec(e)
        for c in fx.get('checks', []):
            user = self.users.get(int(c['user']))
            patch = self.patches.get(int(c['patch']))
            if user is None or patch is None:
                raise ValueError('fixture check: unknown user or patch')
            date = parse_naive(c['date'], 'check date') \
                if 'date' in c else now_naive()
            self.create_check(patch, user, {
                'state': c['state'], 'context': c.get('context', 'default'),
                'description': c.get('description'),
                'target_url': c.get('target_url')}, date)

    def mail_text(self, spec):
        if 'text' in spec:
            return spec['text']
        if 'file' not in spec:
            raise ValueError('a mail needs "file" or "text"')
        path = spec['file']
        if not os.path.isabs(path):
            path = os.path.join(self.base_dir, path)
        with open(path, encoding='utf-8', errors='surrogateescape') as f:
            return f.read()

    def find_project(self, key):
        if key is None or key == '':
            return None
        key = str(key)
        for p in self.projects:
            if key.isdigit() and int(key) == p['id']:
                return p
            if key.lower() == p['link_name'].lower():
                return p
        return None

    def person_for(self, name, addr):
        for p in self.people.values():
            if p['email'].lower() == addr.lower():
                return p
        pid = self.new_id('person', self.people)
        p = {'id': pid, 'name': name, 'email': addr, 'user': None}
        self.people[pid] = p
        return p

    # receiving mails ---------------------------------------------------

    def event_date(self, base):
        """The date of a new event: now, or for a fixture the "received"
        date, then one microsecond apart so that a mail's events keep the
        order in which patchwork inserts them."""
        if base is None:
            return now_naive()
        d = base
        if self.last_event_date is not None and d <= self.last_event_date:
            d = self.last_event_date + datetime.timedelta(microseconds=1)
        self.last_event_date = d
        return d

    def add_event(self, category, project, date, actor=None, wanted_id=None,
                  **refs):
        ids = {e['id'] for e in self.events}
        eid = self.new_id('event', ids, wanted_id)
        ev = {'id': eid, 'category': category, 'project': project['id'],
              'date': date, 'actor': actor}
        ev.update(refs)
        self.events.append(ev)
        return eid

    def add_mail(self, project, series_id, mail, wanted_id, events,
                 received, extra=None):
        extra = extra or {}
        name, bare, prefixes = clean_subject(mail.subject,
                                             [project['link_name']])
        x, n = parse_series_marker(prefixes)
        if x is None:
            x = n = 1
        version = parse_version(name, prefixes)
        person = self.person_for(mail.from_name, mail.from_email)
        is_cover = (x == 0 and not mail.diff)
        created = []

        def ev(category, **refs):
            if events:
                created.append(self.add_event(
                    category, project, self.event_date(received), **refs))

        series = None
        if series_id is not None:
            series = self.series.get(int(series_id))
        if series is None:
            sid = self.new_id('series', self.series, series_id)
            series = {'id': sid, 'project': project['id'], 'name': None,
                      'date': mail.date, 'submitter': person['id'],
                      'version': version, 'total': n, 'cover': None,
                      'patches': []}
            self.series[sid] = series
            ev('series-created', series=sid)
        if is_cover:
            cid = self.new_id('cover', self.covers, wanted_id)
            self.covers[cid] = {'id': cid, 'project': project['id'],
                                'mail': mail, 'name': name,
                                'prefixes': prefixes,
                                'submitter': person['id'],
                                'series': series['id']}
            series['cover'] = cid
            # The cover letter's subject, prefixes stripped, names the
            # series from now on.
            series['name'] = bare
            ev('cover-created', cover=cid)
            return {'series': series['id'], 'cover': cid, 'patches': [],
                    'events': created}
        pid = self.new_id('patch', self.patches, wanted_id)
        patch = {'id': pid, 'project': project['id'], 'mail': mail,
                 'name': name, 'prefixes': prefixes, 'number': x,
                 'submitter': person['id'], 'series': series['id'],
                 'state': extra.get('state', 'new'),
                 'archived': bool(extra.get('archived', False)),
                 'delegate': extra.get('delegate'),
                 'hash': hashlib.sha1(mail.diff.encode(
                     'utf-8', 'surrogateescape')).hexdigest()
                 if mail.diff else None}
        self.patches[pid] = patch
        series['patches'].append(pid)
        if series['name'] is None and x == 1:
            series['name'] = name
        ev('patch-created', patch=pid)
        # patchwork/signals.py create_patch_completed_event
        numbers = {self.patches[p]['number']: p for p in series['patches']}
        below = sum(1 for k in numbers if k < x)
        if below == x - 1:
            ev('patch-completed', patch=pid, series=series['id'])
            k = x + 1
            while k in numbers:
                ev('patch-completed', patch=numbers[k], series=series['id'])
                k += 1
        if len(series['patches']) >= series['total']:
            ev('series-completed', series=series['id'])
        return {'series': series['id'], 'cover': None, 'patches': [pid],
                'events': created}

    def add_comment(self, spec, mail, event, received):
        if 'patch' in spec:
            parent = self.patches.get(int(spec['patch']))
            table, kind, cat = self.patch_comments, 'patch', \
                'patch-comment-created'
        elif 'cover' in spec:
            parent = self.covers.get(int(spec['cover']))
            table, kind, cat = self.cover_comments, 'cover', \
                'cover-comment-created'
        else:
            raise ValueError('a comment needs "patch" or "cover"')
        if parent is None:
            raise ValueError('comment: unknown %s' % kind)
        person = self.person_for(mail.from_name, mail.from_email)
        cid = self.new_id(kind + '-comment', table, spec.get('id'))
        # A comment is never split into a diff (find_comment_content); its
        # "addressed" is null unless the mail asks for action
        # (find_comment_addressed_by_header).
        mail.content, mail.diff = clean_content(mail.body), ''
        addressed = (False if 'X-Patchwork-Action-Required' in mail.msg
                     else None)
        table[cid] = {'id': cid, 'kind': kind, 'parent': parent['id'],
                      'mail': mail, 'submitter': person['id'],
                      'addressed': addressed}
        eid = None
        if event:
            project = self.find_project(parent['project'])
            eid = self.add_event(cat, project, self.event_date(received),
                                 **{kind: parent['id'], 'comment': cid})
        return {'comment': cid, 'event': eid}

    def add_event_spec(self, e):
        cat = e.get('category')
        if cat not in CATEGORIES:
            raise ValueError('unknown event category %r' % cat)
        refs = {}
        for k in ('series', 'patch', 'cover', 'comment', 'check'):
            if e.get(k) is not None:
                refs[k] = int(e[k])
        for k in ('previous_state', 'current_state', 'previous_delegate',
                  'current_delegate'):
            if k in e:
                refs[k] = e[k]
        project = self.find_project(e.get('project', self.projects[0]['id']))
        if project is None:
            raise ValueError('event: unknown project')
        date = parse_naive(e['date'], 'event date') if 'date' in e \
            else now_naive()
        return self.add_event(cat, project, date, e.get('actor'),
                              e.get('id'), **refs)

    # checks ------------------------------------------------------------

    def create_check(self, patch, user, fields, date=None):
        cid = self.new_id('check', self.checks)
        check = {'id': cid, 'patch': patch['id'], 'user': user['id'],
                 'date': date or now_naive(), 'state': fields['state'],
                 'target_url': fields.get('target_url'),
                 'context': fields.get('context', 'default'),
                 'description': fields.get('description')}
        self.checks[cid] = check
        self.check_order.append(cid)
        project = self.find_project(patch['project'])
        self.add_event('check-created', project,
                       self.event_date(None), actor=user['id'],
                       patch=patch['id'], check=cid)
        return check

    def combined_check(self, patch_id):
        """Patch.combined_check_state: worst of the newest per (user,
        context); no checks at all is "pending"."""
        newest = {}
        for cid in self.check_order:
            c = self.checks[cid]
            if c['patch'] != patch_id:
                continue
            key = (c['user'], c['context'])
            if key not in newest or c['date'] >= newest[key]['date']:
                newest[key] = c
        states = [c['state'] for c in newest.values()]
        for s in ('fail', 'warning', 'pending'):
            if s in states:
                return s
        return 'success' if states else 'pending'


class Renderer:
    """JSON shapes of patchwork's serializers for one request."""

    def __init__(self, state, host, ver):
        self.st = state
        self.root = 'http://%s' % host
        self.ver = ver

    def api(self, path):
        return '%s/api/%s/%s' % (self.root, self.ver, path)

    def web(self, path):
        return self.root + path

    def project_embedded(self, pid):
        p = self.st.find_project(pid)
        d = {'id': p['id'], 'url': self.api('projects/%d/' % p['id']),
             'name': p['name'], 'link_name': p['link_name'],
             'list_id': p['list_id'], 'list_email': p['list_email'],
             'web_url': p['web_url'], 'scm_url': p['scm_url'],
             'webscm_url': p['webscm_url'],
             'list_archive_url': p['list_archive_url'],
             'list_archive_url_format': p['list_archive_url_format'],
             'commit_url_format': p['commit_url_format']}
        return drop_versioned(d, self.ver, {
            '1.2': ('list_archive_url', 'list_archive_url_format',
                    'commit_url_format')})

    def project_detail(self, p):
        d = self.project_embedded(p['id'])
        maint = [self.user(u) for u in self.st.users.values()
                 if p['link_name'] in u['maintainer_of']
                 or str(p['id']) in u['maintainer_of']]
        out = {}
        for k, v in d.items():
            if k == 'list_archive_url':
                out['maintainers'] = maint
                out['subject_match'] = p.get('subject_match', '')
            out[k] = v
        if 'maintainers' not in out:
            out['maintainers'] = maint
            out['subject_match'] = p.get('subject_match', '')
        return out

    def user(self, u):
        if u is None:
            return None
        return {'id': u['id'], 'url': self.api('users/%d/' % u['id']),
                'username': u['username'], 'first_name': u['first_name'],
                'last_name': u['last_name'], 'email': u['email']}

    def person(self, pid):
        p = self.st.people[pid]
        return {'id': p['id'], 'url': self.api('people/%d/' % p['id']),
                'name': p['name'], 'email': p['email']}

    def archive_url(self, project_id, msgid):
        p = self.st.find_project(project_id)
        fmt = p.get('list_archive_url_format') or ''
        return fmt.format(msgid.strip('<>')) if fmt else None

    def link(self, project_id):
        return self.st.find_project(project_id)['link_name']

    def patch_mbox_url(self, patch):
        return self.web('/project/%s/patch/%s/mbox/' % (
            self.link(patch['project']), encoded_msgid(patch['mail'].msgid)))

    def cover_mbox_url(self, cover):
        return self.web('/project/%s/cover/%s/mbox/' % (
            self.link(cover['project']), encoded_msgid(cover['mail'].msgid)))

    def patch_embedded(self, pid):
        p = self.st.patches.get(pid)
        if p is None:
            return None
        d = {'id': p['id'], 'url': self.api('patches/%d/' % p['id']),
             'web_url': self.web('/project/%s/patch/%s/' % (
                 self.link(p['project']), encoded_msgid(p['mail'].msgid))),
             'msgid': p['mail'].msgid,
             'list_archive_url': self.archive_url(p['project'],
                                                  p['mail'].msgid),
             'date': fmt_date(p['mail'].date), 'name': p['name'],
             'mbox': self.patch_mbox_url(p)}
        return drop_versioned(d, self.ver, {'1.1': ('web_url',),
                                            '1.2': ('list_archive_url',)})

    def cover_embedded(self, cid):
        c = self.st.covers.get(cid)
        if c is None:
            return None
        d = {'id': c['id'], 'url': self.api('covers/%d/' % c['id']),
             'web_url': self.web('/project/%s/cover/%s/' % (
                 self.link(c['project']), encoded_msgid(c['mail'].msgid))),
             'msgid': c['mail'].msgid,
             'list_archive_url': self.archive_url(c['project'],
                                                  c['mail'].msgid),
             'date': fmt_date(c['mail'].date), 'name': c['name'],
             'mbox': self.cover_mbox_url(c)}
        return drop_versioned(d, self.ver, {'1.1': ('web_url', 'mbox'),
                                            '1.2': ('list_archive_url',)})

    def series_embedded(self, sid):
        s = self.st.series.get(sid)
        if s is None:
            return None
        d = {'id': s['id'], 'url': self.api('series/%d/' % s['id']),
             'web_url': self.web('/project/%s/list/?series=%d' % (
                 self.link(s['project']), s['id'])),
             'date': fmt_date(s['date']), 'name': s['name'],
             'version': s['version'],
             'mbox': self.web('/series/%d/mbox/' % s['id'])}
        return drop_versioned(d, self.ver, {'1.1': ('web_url',)})

    def comment_url(self, c):
        return self.api('%s/%d/comments/%d/' % (
            'patches' if c['kind'] == 'patch' else 'covers', c['parent'],
            c['id']))

    def comment_web_url(self, c):
        parent = (self.st.patches if c['kind'] == 'patch'
                  else self.st.covers)[c['parent']]
        return self.web('/project/%s/%s/%s/#%d' % (
            self.link(parent['project']), c['kind'],
            encoded_msgid(parent['mail'].msgid), c['id']))

    def comment_embedded(self, c):
        if c is None:
            return None
        parent = (self.st.patches if c['kind'] == 'patch'
                  else self.st.covers)[c['parent']]
        d = {'id': c['id'], 'url': self.comment_url(c),
             'web_url': self.comment_web_url(c), 'msgid': c['mail'].msgid,
             'list_archive_url': self.archive_url(parent['project'],
                                                  c['mail'].msgid),
             'date': fmt_date(c['mail'].date), 'name': c['mail'].subject}
        return drop_versioned(d, self.ver, {'1.1': ('web_url',),
                                            '1.2': ('list_archive_url',),
                                            '1.3': ('url',)})

    def comment_detail(self, c):
        """patchwork 3.1 api/comment.py: no "url" (the field list of the
        comment serializers leaves it out), "addressed" from 1.3."""
        parent = (self.st.patches if c['kind'] == 'patch'
                  else self.st.covers)[c['parent']]
        d = {'id': c['id'],
             'web_url': self.comment_web_url(c), 'msgid': c['mail'].msgid,
             'list_archive_url': self.archive_url(parent['project'],
                                                  c['mail'].msgid),
             'date': fmt_date(c['mail'].date),
             'subject': c['mail'].subject,
             'submitter': self.person(c['submitter']),
             'content': c['mail'].content,
             'headers': c['mail'].headers_json(),
             'addressed': c['addressed']}
        return drop_versioned(d, self.ver, {'1.1': ('web_url',),
                                            '1.2': ('list_archive_url',),
                                            '1.3': ('addressed',)})

    def check_embedded(self, cid):
        c = self.st.checks.get(cid)
        if c is None:
            return None
        return {'id': c['id'],
                'url': self.api('patches/%d/checks/%d/' % (c['patch'],
                                                          c['id'])),
                'date': fmt_date(c['date']), 'state': c['state'],
                'target_url': c['target_url'], 'context': c['context']}

    def check(self, c):
        return {'id': c['id'],
                'url': self.api('patches/%d/checks/%d/' % (c['patch'],
                                                          c['id'])),
                'user': self.user(self.st.users.get(c['user'])),
                'date': fmt_date(c['date']), 'state': c['state'],
                'target_url': c['target_url'], 'context': c['context'],
                'description': c['description']}

    def event(self, e):
        d = {'id': e['id'], 'category': e['category'],
             'project': self.project_embedded(e['project']),
             'date': fmt_date(e['date']),
             'actor': self.user(self.st.users.get(e['actor']))
             if e.get('actor') is not None else None}
        payload = {}
        for key in PAYLOAD_KEYS[e['category']]:
            ref = e.get(key)
            if key == 'series':
                payload[key] = self.series_embedded(ref)
            elif key == 'patch':
                payload[key] = self.patch_embedded(ref)
            elif key == 'cover':
                payload[key] = self.cover_embedded(ref)
            elif key == 'check':
                payload[key] = self.check_embedded(ref)
            elif key == 'comment':
                table = (self.st.patch_comments
                         if e['category'] == 'patch-comment-created'
                         else self.st.cover_comments)
                payload[key] = self.comment_embedded(table.get(ref))
            elif key in ('previous_delegate', 'current_delegate'):
                payload[key] = self.user(self.st.users.get(ref)) \
                    if ref is not None else None
            else:
                payload[key] = ref
        d['payload'] = payload
        return drop_versioned(d, self.ver, {'1.2': ('actor',)})

    def series_detail(self, s):
        patches = sorted((self.st.patches[p] for p in s['patches']),
                         key=lambda p: (p['mail'].date, p['id']))
        d = {'id': s['id'], 'url': self.api('series/%d/' % s['id']),
             'web_url': self.web('/project/%s/list/?series=%d' % (
                 self.link(s['project']), s['id'])),
             'project': self.project_embedded(s['project']),
             'name': s['name'], 'date': fmt_date(s['date']),
             'submitter': self.person(s['submitter']),
             'version': s['version'], 'total': s['total'],
             'received_total': len(s['patches']),
             'received_all': s['total'] <= len(s['patches']),
             'mbox': self.web('/series/%d/mbox/' % s['id']),
             'cover_letter': self.cover_embedded(s['cover'])
             if s['cover'] is not None else None,
             'patches': [self.patch_embedded(p['id']) for p in patches]}
        return drop_versioned(d, self.ver, {'1.1': ('web_url',)})

    def patch_detail(self, p, full=True):
        delegate = self.st.users.get(p['delegate']) \
            if p['delegate'] is not None else None
        root = self.root
        d = {'id': p['id'], 'url': self.api('patches/%d/' % p['id']),
             'web_url': self.web('/project/%s/patch/%s/' % (
                 self.link(p['project']), encoded_msgid(p['mail'].msgid))),
             'project': self.project_embedded(p['project']),
             'msgid': p['mail'].msgid,
             'list_archive_url': self.archive_url(p['project'],
                                                  p['mail'].msgid),
             'date': fmt_date(p['mail'].date), 'name': p['name'],
             'commit_ref': None, 'pull_url': None, 'state': p['state'],
             'archived': p['archived'], 'hash': p['hash'],
             'submitter': self.person(p['submitter']),
             'delegate': self.user(delegate),
             'mbox': self.patch_mbox_url(p),
             'series': [self.series_embedded(p['series'])]
             if p['series'] is not None else [],
             # Built with reverse() without a version, as patchwork does.
             'comments': '%s/api/patches/%d/comments/' % (root, p['id']),
             'check': self.st.combined_check(p['id']),
             'checks': '%s/api/patches/%d/checks/' % (root, p['id']),
             'tags': {}, 'related': []}
        if full:
            d['headers'] = p['mail'].headers_json()
            d['content'] = p['mail'].content
            d['diff'] = p['mail'].diff
            d['prefixes'] = p['prefixes']
        return drop_versioned(d, self.ver, {
            '1.1': ('comments', 'web_url'),
            '1.2': ('list_archive_url', 'related')})

    def cover_detail(self, c, full=True):
        d = {'id': c['id'], 'url': self.api('covers/%d/' % c['id']),
             'web_url': self.web('/project/%s/cover/%s/' % (
                 self.link(c['project']), encoded_msgid(c['mail'].msgid))),
             'project': self.project_embedded(c['project']),
             'msgid': c['mail'].msgid,
             'list_archive_url': self.archive_url(c['project'],
                                                  c['mail'].msgid),
             'date': fmt_date(c['mail'].date), 'name': c['name'],
             'submitter': self.person(c['submitter']),
             'mbox': self.cover_mbox_url(c),
             'series': [self.series_embedded(c['series'])]
             if c['series'] is not None else [],
             'comments': '%s/api/covers/%d/comments/' % (self.root, c['id'])}
        if full:
            d['headers'] = c['mail'].headers_json()
            d['content'] = c['mail'].content
        return drop_versioned(d, self.ver, {
            '1.1': ('web_url', 'mbox', 'comments'),
            '1.2': ('list_archive_url',)})


POSTSCRIPT_RE = re.compile(r'^-{2,3} ?$', re.M)


def submission_to_mbox(st, sub, is_patch):
    """patchwork views/utils.py _submission_to_mbox: the content (message,
    notes, and what followed the diff) with review tags, "---" and the
    notes, then the diff; headers set again through Python's email package
    (policy compat32), which folds the long ones (a Message-Id of git's
    <sha.time.git.address> form goes to a continuation line).  No From
    escaping (Message.as_bytes does not mangle)."""
    mail = sub['mail']
    body = ''
    if mail.content:
        body = mail.content.strip() + '\n'
    parts = POSTSCRIPT_RE.split(body, 1)
    if len(parts) == 2:
        body, postscript = parts
        body = body.strip() + '\n'
        postscript = postscript.rstrip()
    else:
        postscript = ''
    if is_patch:
        for c in st.patch_comments.values():
            if c['parent'] == sub['id']:
                for m in TAG_RE.finditer(c['mail'].content):
                    body += m.group(0) + '\n'
    if postscript:
        body += '---' + postscript + '\n'
    if is_patch and mail.diff:
        body += '\n' + mail.diff
    out = email.mime.nonmultipart.MIMENonMultipart('text', 'plain',
                                                   charset='utf-8')
    out.set_payload(body.encode('utf-8'))
    email.encoders.encode_7or8bit(out)
    person = st.people[sub['submitter']]
    out['X-Patchwork-Submitter'] = email.utils.formataddr(
        (str(email.header.Header(person['name'], 'utf-8')), person['email']))
    out['X-Patchwork-Id'] = str(sub['id'])
    if is_patch and sub.get('delegate') is not None:
        delegate = st.users.get(sub['delegate'])
        if delegate is not None:
            out['X-Patchwork-Delegate'] = delegate['email']
    out.set_unixfrom('From patchwork ' + mail.date.ctime())
    orig = email.parser.HeaderParser(policy=email.policy.compat32).parsestr(
        mail.head)
    for key, val in orig.items():
        if key in ('Content-Type', 'Content-Transfer-Encoding'):
            continue
        out[key] = val
    if 'Date' not in out:
        out['Date'] = email.utils.formatdate(
            mail.date.replace(tzinfo=datetime.timezone.utc).timestamp())
    return out.as_bytes(True).decode()


def series_mbox_filename(name):
    slug = re.sub(r'[^a-z0-9]+', '-', (name or 'series').lower()).strip('-')
    return (slug or 'series') + '.patch'


def page_url(url, page):
    """DRF replace_query_param / remove_query_param (page None)."""
    scheme, netloc, path, query, frag = urllib.parse.urlsplit(url)
    qd = urllib.parse.parse_qs(query, keep_blank_values=True)
    if page is None:
        qd.pop('page', None)
    else:
        qd['page'] = [str(page)]
    query = urllib.parse.urlencode(sorted(qd.items()), doseq=True)
    return urllib.parse.urlunsplit((scheme, netloc, path, query, frag))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'fake-patchwork/1.0'

    # plumbing ----------------------------------------------------------

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write('fake-patchwork: %s\n' % (fmt % args))

    def do_GET(self):
        self.dispatch('GET')

    def do_HEAD(self):
        self.dispatch('HEAD')

    def do_POST(self):
        self.dispatch('POST')

    def do_PUT(self):
        self.dispatch('PUT')

    def do_PATCH(self):
        self.dispatch('PATCH')

    def do_DELETE(self):
        self.dispatch('DELETE')

    def read_body(self):
        if 'chunked' in (self.headers.get('Transfer-Encoding') or '').lower():
            return self.read_chunked()
        n = self.headers.get('Content-Length')
        if n is None:
            return b''
        try:
            n = int(n)
        except ValueError:
            raise HTTPError(400, 'bad Content-Length', 'text/plain')
        return self.rfile.read(n) if n > 0 else b''

    def read_chunked(self):
        data = b''
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b';')[0].strip() or b'x', 16)
            except ValueError:
                raise HTTPError(400, 'bad chunk size', 'text/plain')
            if size == 0:
                # trailers, up to the blank line
                while self.rfile.readline(1024) not in (b'\r\n', b'\n', b''):
                    pass
                return data
            data += self.rfile.read(size)
            self.rfile.readline(1024)

    def send(self, status, body, content_type='application/json',
             headers=None):
        if isinstance(body, (dict, list)):
            data = json.dumps(body, separators=(',', ':'),
                              ensure_ascii=False).encode('utf-8')
        elif isinstance(body, bytes):
            data = body
        else:
            data = str(body).encode('utf-8', 'surrogateescape')
        if content_type in ('text/html', 'text/plain'):
            content_type += '; charset=utf-8'
        if getattr(self, 'garble', False):
            # The work is done; the answer is cut JSON (a broken proxy).
            data = data[:max(1, len(data) // 2)] or b'{'
        if getattr(self, 'lost_reply', False):
            # The work is done; the answer never reaches the client.
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.status_sent = status
            return
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)
        self.status_sent = status

    def dispatch(self, method):
        st = self.server.state
        self.status_sent = None
        self.lost_reply = False
        self.garble = False
        url = urllib.parse.urlsplit(self.path)
        path = url.path
        try:
            body = self.read_body()
        except HTTPError as e:
            self.close_connection = True
            self.send(e.status, e.body, e.content_type)
            return
        self.body = body
        control = path.startswith('/_fake/')
        entry = None
        if not control:
            with st.lock:
                st.requests_total += 1
                auth = self.headers.get('Authorization')
                entry = {'method': method, 'path': path, 'query': url.query,
                         'content_type': self.headers.get('Content-Type'),
                         'authorization': auth.split()[0] if auth and
                         auth.split() else None,
                         'body': body[:4096].decode('utf-8', 'replace'),
                         'status': None}
                st.request_log.append(entry)
                del st.request_log[:-1000]
                rule = None
                now = time.monotonic()
                for r in st.fail_rules:
                    if r['until'] is not None:
                        if now >= r['until']:
                            continue
                    elif r['count'] <= 0:
                        continue
                    if r.get('method') and r['method'].upper() != method:
                        continue
                    if r.get('path') and not path.startswith(r['path']):
                        continue
                    rule = r
                    if r['until'] is None:
                        r['count'] -= 1
                    break
                st.fail_rules = [r for r in st.fail_rules
                                 if (r['count'] > 0 if r['until'] is None
                                     else now < r['until'])]
            if rule is not None and self.apply_fail(rule, entry):
                self.count_check_post(method, path, entry['status'])
                return
            self.lost_reply = rule is not None and rule.get('lost_reply')
            self.garble = rule is not None and rule.get('garble')
        try:
            if control:
                self.control(method, path, url.query)
            else:
                self.route(method, path, url.query)
        except HTTPError as e:
            self.send(e.status, e.body, e.content_type, e.headers)
        except Exception as e:  # a bug in the fake: say so loudly
            sys.stderr.write('fake-patchwork: internal error: %r\n' % (e,))
            import traceback
            traceback.print_exc()
            self.send(500, HTML_500, 'text/html')
        if entry is not None:
            with st.lock:
                entry['status'] = self.status_sent
                if self.lost_reply:
                    entry['lost_reply'] = True
            self.count_check_post(method, path, self.status_sent)

    def count_check_post(self, method, path, status):
        """Every POST to a checks list, answered or not (0: dropped)."""
        if method != 'POST' or not CHECKS_PATH_RE.match(path):
            return
        st = self.server.state
        with st.lock:
            st.check_posts += 1
            key = str(status or 0)
            st.check_posts_by_status[key] = \
                st.check_posts_by_status.get(key, 0) + 1

    def apply_fail(self, rule, entry):
        """Returns True when the request was answered (or dropped)."""
        hang = float(rule.get('hang') or 0)
        if hang > 0:
            time.sleep(hang)
        if rule.get('drop'):
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            entry['status'] = 0
            return True
        status = rule.get('status')
        if status:
            headers = {}
            if rule.get('retry_after') is not None:
                headers['Retry-After'] = str(rule['retry_after'])
            body = rule.get('body')
            if body is None:
                body = HTML_500 if int(status) >= 500 else ''
            self.send(int(status), body, 'text/html', headers)
            entry['status'] = int(status)
            return True
        return False

    def host(self):
        return self.headers.get('Host') or '%s:%d' % \
            self.server.server_address[:2]

    def full_url(self):
        return 'http://%s%s' % (self.host(), self.path)

    # control -----------------------------------------------------------

    def control_json(self):
        try:
            data = json.loads(self.body.decode('utf-8') or '{}')
        except ValueError as e:
            raise HTTPError(400, {'error': 'bad JSON: %s' % e})
        if not isinstance(data, dict):
            raise HTTPError(400, {'error': 'expected an object'})
        return data

    def control(self, method, path, query):
        st = self.server.state
        try:
            self.control_inner(st, method, path)
        except (ValueError, KeyError, TypeError, OSError) as e:
            raise HTTPError(400, {'error': str(e)})

    def control_inner(self, st, method, path):
        if method == 'GET' and path == '/_fake/checks':
            with st.lock:
                checks = []
                for cid in st.check_order:
                    c = dict(st.checks[cid])
                    c['date'] = fmt_date(c['date'])
                    checks.append(c)
                self.send(200, {'checks': checks,
                                'posts': {'total': st.check_posts,
                                          'by_status':
                                          st.check_posts_by_status},
                                'requests': st.requests_total})
            return
        if method == 'GET' and path == '/_fake/requests':
            with st.lock:
                self.send(200, list(st.request_log))
            return
        if method != 'POST':
            raise not_found_html()
        if path == '/_fake/reset':
            with st.lock:
                st.reset_counters()
            self.send(200, {'ok': True})
            return
        data = self.control_json()
        if path == '/_fake/fail':
            for_s = data.get('for_s')
            rule = {'count': int(data.get('count', 1)),
                    'until': time.monotonic() + float(for_s)
                    if for_s is not None else None,
                    'status': data.get('status'), 'hang': data.get('hang'),
                    'drop': bool(data.get('drop')),
                    'lost_reply': bool(data.get('lost_reply')),
                    'garble': bool(data.get('garble')),
                    'method': data.get('method'), 'path': data.get('path'),
                    'retry_after': data.get('retry_after'),
                    'body': data.get('body')}
            with st.lock:
                st.fail_rules.append(rule)
            self.send(200, {'ok': True})
        elif path == '/_fake/series':
            with st.lock:
                project = st.find_project(data.get('project',
                                                   st.projects[0]['id']))
                if project is None:
                    raise ValueError('unknown project')
                series_id = data.get('series')
                out = {'series': series_id, 'cover': None, 'patches': [],
                       'events': []}
                for m in data.get('mails', []):
                    date = parse_naive(m['date'], 'date') \
                        if 'date' in m else None
                    mail = Mail(st.mail_text(m), date)
                    res = st.add_mail(project, series_id, mail, m.get('id'),
                                      data.get('events', True), None, m)
                    series_id = out['series'] = res['series']
                    if res['cover'] is not None:
                        out['cover'] = res['cover']
                    out['patches'] += res['patches']
                    out['events'] += res['events']
            self.send(200, out)
        elif path == '/_fake/comments':
            with st.lock:
                date = parse_naive(data['date'], 'date') \
                    if 'date' in data else None
                mail = Mail(st.mail_text(data), date)
                out = st.add_comment(data, mail, data.get('event', True),
                                     None)
            self.send(200, out)
        elif path == '/_fake/events':
            with st.lock:
                ids = [st.add_event_spec(e) for e in data.get('events', [])]
            self.send(200, {'events': ids})
        else:
            raise not_found_html()

    # routing -----------------------------------------------------------

    def route(self, method, path, query):
        if path.startswith('/api/') or path == '/api':
            return self.route_api(method, path, query)
        return self.route_web(method, path, query)

    def append_slash(self, path, query, method):
        """Django's CommonMiddleware: a 301 to the path with a slash."""
        loc = path + '/' + ('?' + query if query else '')
        raise HTTPError(301, '', 'text/html; charset=utf-8',
                        {'Location': loc})

    def route_api(self, method, path, query):
        if path == '/api':
            self.append_slash(path, query, method)
        m = re.match(r'^/api/(?:(\d+\.\d+)/)?(.*)$', path)
        if not m:
            raise not_found_html()
        ver = m.group(1) or LATEST
        rest = m.group(2)
        if m.group(1) is not None and ver not in API_VERSIONS:
            raise not_found_html()
        routes = [
            (r'', 'index'),
            (r'projects/', 'projects'),
            (r'projects/([^/]+)/', 'project'),
            (r'events/', 'events'),
            (r'series/', 'series_list'),
            (r'series/([^/]+)/', 'series'),
            (r'patches/', 'patches'),
            (r'patches/([^/]+)/', 'patch'),
            (r'covers/', 'covers'),
            (r'covers/([^/]+)/', 'cover'),
            (r'patches/(\d+)/comments/', 'patch_comments'),
            (r'covers/(\d+)/comments/', 'cover_comments'),
            (r'patches/(\d+)/comments/(\d+)/', 'patch_comment'),
            (r'covers/(\d+)/comments/(\d+)/', 'cover_comment'),
            (r'patches/([^/]+)/checks/', 'checks'),
            (r'patches/([^/]+)/checks/([^/]+)/', 'check'),
            (r'people/([^/]+)/', 'person'),
            (r'users/([^/]+)/', 'user'),
        ]
        for pattern, name in routes:
            mm = re.match('^' + pattern + r'\Z', rest)
            if mm:
                break
            if not rest.endswith('/') and re.match(
                    '^' + pattern + r'\Z', rest + '/'):
                self.append_slash(path, query, method)
        else:
            raise not_found_html()
        min_ver = {'patch_comments': '1.1', 'cover_comments': '1.1',
                   'patch_comment': '1.3', 'cover_comment': '1.3'}
        if name in min_ver and not version_at_least(ver, min_ver[name]):
            raise not_found_html()
        st = self.server.state
        with st.lock:
            user = self.authenticate(st)
            r = Renderer(st, self.host(), ver)
            handler = getattr(self, 'api_' + name)
            if method not in ('GET', 'HEAD') and name not in ('checks',
                                                               'check'):
                raise json_error(405, 'Method "%s" not allowed.' % method)
            handler(st, r, method, query, user, *mm.groups())

    def authenticate(self, st):
        """DRF: Session (never here), Basic, Token; failures are 403."""
        auth = self.headers.get('Authorization')
        if not auth:
            return None
        parts = auth.split()
        if not parts:
            return None
        scheme = parts[0].lower()
        if scheme == 'basic':
            if len(parts) == 1:
                raise json_error(403, 'Invalid basic header. No credentials '
                                 'provided.')
            if len(parts) > 2:
                raise json_error(403, 'Invalid basic header. Credentials '
                                 'string should not contain spaces.')
            try:
                raw = base64.b64decode(parts[1], validate=True).decode()
                name, _, password = raw.partition(':')
            except (ValueError, UnicodeDecodeError):
                raise json_error(403, 'Invalid basic header. Credentials '
                                 'not correctly base64 encoded.')
            for u in st.users.values():
                if u['username'] == name and u['password'] is not None \
                        and u['password'] == password and u['active']:
                    return u
            raise json_error(403, 'Invalid username/password.')
        if scheme == 'token':
            if len(parts) == 1:
                raise json_error(403, 'Invalid token header. No credentials '
                                 'provided.')
            if len(parts) > 2:
                raise json_error(403, 'Invalid token header. Token string '
                                 'should not contain spaces.')
            for u in st.users.values():
                if u['token'] is not None and u['token'] == parts[1]:
                    if not u['active']:
                        raise json_error(403, 'User inactive or deleted.')
                    return u
            raise json_error(403, 'Invalid token.')
        return None

    # lists ---------------------------------------------------------------

    def paginate(self, items, query):
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        per_page = PER_PAGE_DEFAULT
        if 'per_page' in q:
            try:
                v = int(q['per_page'][-1])
                if v > 0:
                    per_page = min(v, PER_PAGE_MAX)
            except ValueError:
                pass
        num_pages = max(1, (len(items) + per_page - 1) // per_page)
        raw = q['page'][-1] if 'page' in q else ''
        if raw == '':
            page = 1
        elif raw == 'last':
            page = num_pages
        else:
            try:
                page = int(raw)
            except ValueError:
                raise json_error(404, 'Invalid page.')
            if page < 1 or page > num_pages:
                raise json_error(404, 'Invalid page.')
        chunk = items[(page - 1) * per_page:page * per_page]
        url = self.full_url()
        links = []
        if page < num_pages:
            links.append('<%s>; rel="next"' % page_url(url, page + 1))
        if page > 1:
            links.append('<%s>; rel="prev"' % page_url(
                url, None if page - 1 == 1 else page - 1))
        links.append('<%s>; rel="first"' % page_url(url, 1))
        links.append('<%s>; rel="last"' % page_url(url, num_pages))
        return chunk, {'Link': ', '.join(links)}

    def send_list(self, items, query, render):
        chunk, headers = self.paginate(items, query)
        self.send(200, [render(x) for x in chunk], headers=headers)

    @staticmethod
    def filters(query):
        """Last value of each parameter; empty values mean no filter."""
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        return {k: v[-1] for k, v in q.items() if v[-1] != ''}

    @staticmethod
    def int_filter(value):
        try:
            return int(value)
        except ValueError:
            raise InvalidFilter()

    def date_filters(self, f, items, date_of):
        if 'since' in f:
            since = parse_filter_datetime(f['since'])
            items = [x for x in items if date_of(x) >= since]
        if 'before' in f:
            before = parse_filter_datetime(f['before'])
            items = [x for x in items if date_of(x) < before]
        return items

    def project_filter(self, st, f, items, project_of):
        if 'project' in f:
            p = st.find_project(f['project'])
            if p is None:
                raise InvalidFilter()
            items = [x for x in items if project_of(x) == p['id']]
        return items

    def filtered(self, fn):
        try:
            return fn()
        except InvalidFilter:
            return []

    # API handlers ----------------------------------------------------------

    def api_index(self, st, r, method, query, user):
        self.send(200, {k: r.api(k + '/') for k in (
            'bundles', 'covers', 'events', 'patches', 'people', 'projects',
            'series', 'users')})

    def api_projects(self, st, r, method, query, user):
        self.send_list(sorted(st.projects, key=lambda p: p['id']), query,
                       r.project_detail)

    def api_project(self, st, r, method, query, user, key):
        p = st.find_project(key)
        if p is None:
            raise not_found_api()
        self.send(200, r.project_detail(p))

    def api_events(self, st, r, method, query, user):
        f = self.filters(query)

        def select():
            items = list(st.events)
            if not version_at_least(r.ver, '1.3'):
                items = [e for e in items
                         if e['category'] not in COMMENT_CATEGORIES]
            items = self.project_filter(st, f, items, lambda e: e['project'])
            if 'category' in f:
                if f['category'] not in CATEGORIES:
                    raise InvalidFilter()
                items = [e for e in items if e['category'] == f['category']]
            for key, table in (('series', st.series),
                               ('patch', st.patches),
                               ('cover', st.covers),
                               ('actor', st.users)):
                if key in f:
                    v = self.int_filter(f[key])
                    if v not in table:
                        raise InvalidFilter()
                    items = [e for e in items if e.get(key) == v]
            items = self.date_filters(f, items, lambda e: e['date'])
            order = '-date'
            for o in f.get('order', '').split(','):
                if o.strip() in ('date', '-date'):
                    order = o.strip()
                    break
            items.sort(key=lambda e: (e['date'], e['id']),
                       reverse=(order == '-date'))
            return items
        self.send_list(self.filtered(select), query, r.event)

    def api_series_list(self, st, r, method, query, user):
        f = self.filters(query)

        def select():
            items = sorted(st.series.values(), key=lambda s: s['id'])
            items = self.project_filter(st, f, items, lambda s: s['project'])
            if 'submitter' in f:
                v = self.int_filter(f['submitter'])
                items = [s for s in items if s['submitter'] == v]
            return self.date_filters(f, items, lambda s: s['date'])
        self.send_list(self.filtered(select), query, r.series_detail)

    def api_series(self, st, r, method, query, user, sid):
        s = st.series.get(int(sid)) if sid.isdigit() else None
        if s is None:
            raise not_found_api()
        self.send(200, r.series_detail(s))

    def api_patches(self, st, r, method, query, user):
        f = self.filters(query)

        def select():
            items = sorted(st.patches.values(), key=lambda p: p['id'])
            items = self.project_filter(st, f, items, lambda p: p['project'])
            if 'series' in f:
                v = self.int_filter(f['series'])
                if v not in st.series:
                    raise InvalidFilter()
                items = [p for p in items if p['series'] == v]
            if 'submitter' in f:
                v = self.int_filter(f['submitter'])
                items = [p for p in items if p['submitter'] == v]
            if 'state' in f:
                items = [p for p in items if p['state'] == f['state']]
            if 'archived' in f:
                a = f['archived'].lower()
                if a not in ('true', 'false'):
                    raise InvalidFilter()
                items = [p for p in items if p['archived'] == (a == 'true')]
            if 'hash' in f and version_at_least(r.ver, '1.2'):
                items = [p for p in items if p['hash'] == f['hash']]
            if 'msgid' in f and version_at_least(r.ver, '1.2'):
                want = '<%s>' % f['msgid']
                items = [p for p in items if p['mail'].msgid == want]
            return self.date_filters(f, items, lambda p: p['mail'].date)
        self.send_list(self.filtered(select), query,
                       lambda p: r.patch_detail(p, full=False))

    def get_patch(self, st, pid):
        p = st.patches.get(int(pid)) if pid.isdigit() else None
        if p is None:
            raise not_found_api()
        return p

    def api_patch(self, st, r, method, query, user, pid):
        self.send(200, r.patch_detail(self.get_patch(st, pid)))

    def api_covers(self, st, r, method, query, user):
        f = self.filters(query)

        def select():
            items = sorted(st.covers.values(), key=lambda c: c['id'])
            items = self.project_filter(st, f, items, lambda c: c['project'])
            return self.date_filters(f, items, lambda c: c['mail'].date)
        self.send_list(self.filtered(select), query,
                       lambda c: r.cover_detail(c, full=False))

    def api_cover(self, st, r, method, query, user, cid):
        c = st.covers.get(int(cid)) if cid.isdigit() else None
        if c is None:
            raise not_found_api()
        self.send(200, r.cover_detail(c))

    def api_patch_comments(self, st, r, method, query, user, pid):
        self.get_patch(st, pid)
        items = sorted((c for c in st.patch_comments.values()
                        if c['parent'] == int(pid)), key=lambda c: c['id'])
        self.send_list(items, query, r.comment_detail)

    def api_cover_comments(self, st, r, method, query, user, cid):
        if int(cid) not in st.covers:
            raise not_found_api()
        items = sorted((c for c in st.cover_comments.values()
                        if c['parent'] == int(cid)), key=lambda c: c['id'])
        self.send_list(items, query, r.comment_detail)

    def api_patch_comment(self, st, r, method, query, user, pid, cid):
        self.get_patch(st, pid)
        c = st.patch_comments.get(int(cid))
        if c is None or c['parent'] != int(pid):
            raise not_found_api()
        self.send(200, r.comment_detail(c))

    def api_cover_comment(self, st, r, method, query, user, pid, cid):
        if int(pid) not in st.covers:
            raise not_found_api()
        c = st.cover_comments.get(int(cid))
        if c is None or c['parent'] != int(pid):
            raise not_found_api()
        self.send(200, r.comment_detail(c))

    def api_person(self, st, r, method, query, user, pid):
        if not pid.isdigit() or int(pid) not in st.people:
            raise not_found_api()
        self.send(200, r.person(int(pid)))

    def api_user(self, st, r, method, query, user, uid):
        u = st.users.get(int(uid)) if uid.isdigit() else None
        if u is None:
            raise not_found_api()
        self.send(200, r.user(u))

    def api_check(self, st, r, method, query, user, pid, cid):
        if method not in ('GET', 'HEAD'):
            raise json_error(405, 'Method "%s" not allowed.' % method)
        patch = self.get_patch(st, pid)
        c = st.checks.get(int(cid)) if cid.isdigit() else None
        if c is None or c['patch'] != patch['id']:
            raise not_found_api()
        self.send(200, r.check(c))

    def api_checks(self, st, r, method, query, user, pid):
        if method == 'POST':
            return self.post_check_inner(st, r, user, pid)
        if method not in ('GET', 'HEAD'):
            raise json_error(405, 'Method "%s" not allowed.' % method)
        patch = self.get_patch(st, pid)
        f = self.filters(query)

        def select():
            items = [st.checks[c] for c in st.check_order
                     if st.checks[c]['patch'] == patch['id']]
            items.sort(key=lambda c: c['id'])
            if 'user' in f:
                v = f['user']
                match = [u for u in st.users.values()
                         if (v.isdigit() and u['id'] == int(v))
                         or u['username'] == v]
                if not match:
                    raise InvalidFilter()
                items = [c for c in items if c['user'] == match[0]['id']]
            if 'state' in f:
                # ChoiceFilter over the model's integer choices.
                if f['state'] not in ('0', '1', '2', '3'):
                    raise InvalidFilter()
                want = CHECK_STATES[int(f['state'])]
                items = [c for c in items if c['state'] == want]
            if 'context' in f:
                items = [c for c in items if c['context'] == f['context']]
            return self.date_filters(f, items, lambda c: c['date'])
        self.send_list(self.filtered(select), query, r.check)

    def is_editable(self, st, patch, user):
        if user is None:
            return False
        if patch.get('delegate') == user['id']:
            return True
        person = st.people.get(patch['submitter'])
        if person is not None and person.get('user') == user['id']:
            return True
        project = st.find_project(patch['project'])
        return project['link_name'] in user['maintainer_of'] or \
            str(project['id']) in user['maintainer_of']

    def request_data(self):
        ctype = (self.headers.get('Content-Type') or '').split(';')[0]
        ctype = ctype.strip().lower()
        if ctype == '':
            return {}
        if ctype == 'application/json':
            text = self.body.decode('utf-8', 'replace')
            try:
                return json.loads(text)
            except ValueError as e:
                raise json_error(400, 'JSON parse error - %s' % e)
        if ctype == 'application/x-www-form-urlencoded':
            q = urllib.parse.parse_qs(self.body.decode('utf-8', 'replace'),
                                      keep_blank_values=True)
            return {k: v[-1] for k, v in q.items()}
        raise json_error(415, 'Unsupported media type "%s" in request.' %
                         self.headers.get('Content-Type'))

    def post_check_inner(self, st, r, user, pid):
        patch = self.get_patch(st, pid)
        if not self.is_editable(st, patch, user):
            raise json_error(403, MSG_NO_PERMISSION)
        data = self.request_data()
        fields = self.validate_check(data)
        check = st.create_check(patch, user, fields)
        body = r.check(check)
        self.send(201, body, headers={'Location': body['url']})

    @staticmethod
    def as_text(value):
        if isinstance(value, (dict, list)):
            return None, 'Not a valid string.'
        if isinstance(value, bool):
            value = 'True' if value else 'False'
        return str(value).strip(), None

    def validate_check(self, data):
        """patchwork CheckSerializer.run_validation, then DRF's fields."""
        if not isinstance(data, dict) or 'state' not in data or \
                data['state'] == '':
            raise HTTPError(400, {'state': ['A check must have a state.']})
        errors = {}
        out = {}
        state = data['state']
        if state in CHECK_STATES:
            out['state'] = state
        elif str(state) in ('0', '1', '2', '3') and \
                not isinstance(state, bool):
            out['state'] = CHECK_STATES[int(str(state))]
        else:
            errors['state'] = ['"%s" is not a valid choice.' % (
                'None' if state is None else state)]
        if 'target_url' in data and data['target_url'] is not None:
            text, bad = self.as_text(data['target_url'])
            msgs = [bad] if bad else []
            if not bad and text != '':
                if len(text) > 200:
                    msgs.append('Ensure this field has no more than 200 '
                                'characters.')
                if not valid_url(text):
                    msgs.append('Enter a valid URL.')
            if msgs:
                errors['target_url'] = msgs
            else:
                out['target_url'] = text
        else:
            out['target_url'] = None
        if 'context' in data:
            if data['context'] is None:
                errors['context'] = ['This field may not be null.']
            else:
                text, bad = self.as_text(data['context'])
                if bad:
                    errors['context'] = [bad]
                elif text == '':
                    errors['context'] = ['This field may not be blank.']
                else:
                    msgs = []
                    if len(text) > 255:
                        msgs.append('Ensure this field has no more than 255 '
                                    'characters.')
                    if not SLUG_RE.match(text):
                        msgs.append('Enter a valid "slug" consisting of '
                                    'letters, numbers, underscores or '
                                    'hyphens.')
                    if msgs:
                        errors['context'] = msgs
                    else:
                        out['context'] = text
        else:
            out['context'] = 'default'
        if data.get('description') is not None:
            text, bad = self.as_text(data['description'])
            if bad:
                errors['description'] = [bad]
            else:
                out['description'] = text
        else:
            out['description'] = None
        if errors:
            raise HTTPError(400, errors)
        return out

    # web ---------------------------------------------------------------------

    def route_web(self, method, path, query):
        st = self.server.state
        routes = [
            (r'/patch/(\d+)/mbox/', self.web_patch_redirect, 'mbox'),
            (r'/patch/(\d+)/raw/', self.web_patch_redirect, 'raw'),
            (r'/patch/(\d+)/', self.web_patch_redirect, ''),
            (r'/cover/(\d+)/mbox/', self.web_cover_redirect, 'mbox'),
            (r'/cover/(\d+)/', self.web_cover_redirect, ''),
            (r'/series/(\d+)/mbox/', self.web_series_mbox, None),
            (r'/project/([^/]+)/patch/([^/]+)/mbox/', self.web_patch_mbox,
             None),
            (r'/project/([^/]+)/patch/([^/]+)/raw/', self.web_patch_raw,
             None),
            (r'/project/([^/]+)/patch/([^/]+)/', self.web_patch_page, None),
            (r'/project/([^/]+)/cover/([^/]+)/mbox/', self.web_cover_mbox,
             None),
            (r'/project/([^/]+)/cover/([^/]+)/', self.web_cover_page, None),
            (r'/project/([^/]+)/list/', self.web_list, None),
        ]
        for pattern, fn, arg in routes:
            m = re.match('^' + pattern + r'\Z', path)
            if m:
                break
            if not path.endswith('/') and re.match('^' + pattern + r'\Z',
                                                   path + '/'):
                self.append_slash(path, query, method)
        else:
            raise not_found_html()
        if method not in ('GET', 'HEAD'):
            raise HTTPError(405, '', 'text/html')
        with st.lock:
            if arg is None:
                fn(st, query, *m.groups())
            else:
                fn(st, query, arg, *m.groups())

    def web_patch_redirect(self, st, query, what, pid):
        p = st.patches.get(int(pid))
        if p is None:
            raise not_found_html()
        loc = '/project/%s/patch/%s/%s' % (
            st.find_project(p['project'])['link_name'],
            encoded_msgid(p['mail'].msgid), what + '/' if what else '')
        # Relative Location, the query string dropped.
        raise HTTPError(302, '', 'text/html; charset=utf-8',
                        {'Location': loc})

    def web_cover_redirect(self, st, query, what, cid):
        c = st.covers.get(int(cid))
        if c is None:
            raise not_found_html()
        loc = '/project/%s/cover/%s/%s' % (
            st.find_project(c['project'])['link_name'],
            encoded_msgid(c['mail'].msgid), what + '/' if what else '')
        raise HTTPError(302, '', 'text/html; charset=utf-8',
                        {'Location': loc})

    def find_by_msgid(self, st, table, link, msgid):
        project = st.find_project(link)
        if project is None or project['link_name'] != link:
            raise not_found_html()
        want = '<%s>' % urllib.parse.unquote(msgid)
        for x in table.values():
            if x['project'] == project['id'] and x['mail'].msgid == want:
                return x
        raise not_found_html()

    def send_mbox(self, text, filename):
        self.send(200, text, 'text/plain', {
            'Content-Disposition': 'attachment; filename=' + filename})

    def web_patch_mbox(self, st, query, link, msgid):
        p = self.find_by_msgid(st, st.patches, link, msgid)
        q = urllib.parse.parse_qs(query)
        filename = series_mbox_filename(p['name'])
        if 'series' in q:
            want = q['series'][-1]
            s = st.series.get(p['series']) if p['series'] else None
            if s is None or (want != '*' and want != str(s['id'])):
                raise not_found_html()
            deps = sorted((st.patches[x] for x in s['patches']
                           if st.patches[x]['number'] < p['number']),
                          key=lambda x: x['number'])
            text = '\n'.join(submission_to_mbox(st, x, True)
                             for x in deps + [p])
        else:
            text = submission_to_mbox(st, p, True)
        self.send_mbox(text, filename)

    def web_patch_raw(self, st, query, link, msgid):
        p = self.find_by_msgid(st, st.patches, link, msgid)
        self.send(200, p['mail'].diff, 'text/x-patch', {
            'Content-Disposition': 'attachment; filename=' +
            series_mbox_filename(p['name']).replace('.patch', '.diff')})

    def web_patch_page(self, st, query, link, msgid):
        p = self.find_by_msgid(st, st.patches, link, msgid)
        self.send(200, '<html><body><h1>%s</h1></body></html>\n' %
                  p['name'], 'text/html')

    def web_cover_mbox(self, st, query, link, msgid):
        c = self.find_by_msgid(st, st.covers, link, msgid)
        self.send_mbox(submission_to_mbox(st, c, False),
                       series_mbox_filename(c['name']))

    def web_cover_page(self, st, query, link, msgid):
        c = self.find_by_msgid(st, st.covers, link, msgid)
        self.send(200, '<html><body><h1>%s</h1></body></html>\n' %
                  c['name'], 'text/html')

    def web_series_mbox(self, st, query, sid):
        s = st.series.get(int(sid))
        if s is None:
            raise not_found_html()
        patches = sorted((st.patches[x] for x in s['patches']),
                         key=lambda x: x['number'])
        text = '\n'.join(submission_to_mbox(st, p, True) for p in patches)
        self.send_mbox(text, series_mbox_filename(s['name']))

    def web_list(self, st, query, link):
        if st.find_project(link) is None:
            raise not_found_html()
        self.send(200, '<html><body>patch list</body></html>\n', 'text/html')


def valid_url(text):
    """Close to Django's URLValidator: http(s)/ftp(s), a host that is a
    name with a dot-separated TLD, localhost, an IPv4 or [IPv6]."""
    if re.search(r'\s', text):
        return False
    try:
        u = urllib.parse.urlsplit(text)
        port = u.port
    except ValueError:
        return False
    if u.scheme.lower() not in ('http', 'https', 'ftp', 'ftps'):
        return False
    host = u.hostname or ''
    if port is not None and not (0 <= port <= 65535):
        return False
    if host == 'localhost':
        return True
    if re.match(r'^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d))'
                r'{3}$', host):
        return True
    if u.netloc.split('@')[-1].startswith('['):
        return ':' in host
    labels = host.split('.')
    if len(labels) < 2:
        return False
    for label in labels[:-1]:
        if not re.match(r'^[a-z0-9\u00a1-\uffff]([a-z0-9\u00a1-\uffff-]{0,61}'
                        r'[a-z0-9\u00a1-\uffff])?$', label, re.I):
            return False
    return bool(re.match(r'^([a-z\u00a1-\uffff-]{2,63}|xn--[a-z0-9]{1,59})$',
                         labels[-1], re.I))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description='fake Patchwork server')
    ap.add_argument('--port', type=int, default=0)
    ap.add_argument('--fixture')
    ap.add_argument('--quiet', action='store_true')
    args = ap.parse_args()
    try:
        state = State(args.fixture)
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.stderr.write('fake-patchwork: fixture %s: %s\n' %
                         (args.fixture, e))
        return 2
    srv = Server(('127.0.0.1', args.port), Handler)
    srv.state = state
    srv.quiet = args.quiet

    def stop(signum, frame):
        # shutdown() waits for serve_forever() to return: not from its
        # own thread.
        threading.Thread(target=srv.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    sys.stdout.write('listening on %d\n' % srv.server_address[1])
    sys.stdout.flush()
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.server_close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
