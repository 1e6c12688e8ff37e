// The inbox's only script, served as is by the API (tsc copies it into dist; test/unit/http/inbox-script.test.ts
// type-checks it against the DOM). Everything it shows goes in through textContent, never as HTML.

/** @typedef {{ toolCallId: string, toolName: string, input: unknown, step: number, requestedAt: string, expiresAt: string, approvers?: string[], approvalsRequired?: number, approvals?: Array<{ approver: string, at: string, reason?: string }> }} PendingApproval */
/** @typedef {PendingApproval & { runId: string, model: string, userId?: string, inputSchema?: unknown, description?: string }} InboxApproval */
/** @typedef {{ path: string, message: string }} Issue */
/** @typedef {{ type: string, seq: number, at: string, step: number, [field: string]: unknown }} RunEvent */
/** @typedef {{ name: string, description?: string, inputSchema: unknown }} Tool */
/** @typedef {{ runId: string, status: string, model: string, step: number, maxSteps: number, output?: string, error?: string, stopReason?: string, pendingApprovals: PendingApproval[] }} RunSnapshot */
/** @typedef {{ ok: boolean, status: number, data: any }} Answer */

let csrfToken = document.querySelector('meta[name="relay-csrf"]')?.getAttribute('content') ?? '';
/** The name the signed-in key's decisions are recorded under. */
let signedInApprover = document.querySelector('meta[name="relay-approver"]')?.getAttribute('content') ?? '';
/** Set once the server said the session ended: the next change first takes up the session of a new sign-in. */
let signedOutSeen = false;
const terminalEvents = new Set(['run_completed', 'run_failed', 'run_cancelled']);
const stateChangingEvents = new Set([
  'tool_awaiting_approval',
  'tool_approval_added',
  'tool_approved',
  'tool_rejected',
  'tool_approval_timed_out',
  'tool_cancelled',
  ...terminalEvents,
]);
/** What a change says when the request never reached the inbox (offline, or the server is down). */
const unreachable = 'Not sent: the inbox could not be reached. Check the connection and try again.';
/** A call that expires sooner than this is marked in the list. */
const soonMs = 10 * 60 * 1000;
/** An input longer than this (characters of its JSON) is folded in the list. */
const foldedInputLength = 1_000;

/**
 * Creates an element with text and attributes.
 * @param {string} tag
 * @param {Record<string, string>} [attributes]
 * @param {Array<Node | string>} [children]
 * @returns {HTMLElement}
 */
function element(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** @param {unknown} value */
function prettyJson(value) {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

/** @param {string} iso */
function timeOf(iso) {
  return new Date(iso).toLocaleString();
}

/**
 * A time as people read it at a glance, "in 4 min" or "2 h ago", with the exact time and its zone in its title.
 * @param {string} iso
 * @returns {HTMLElement}
 */
function relativeTime(iso) {
  const node = element('time', { datetime: iso, 'data-relative': '' });
  drawRelativeTime(node);
  return node;
}

/** @param {HTMLElement} node a `time` made by relativeTime, drawn again as time passes */
function drawRelativeTime(node) {
  const iso = node.getAttribute('datetime') ?? '';
  const leftMs = new Date(iso).getTime() - Date.now();
  const minutes = Math.round(leftMs / 60_000);
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });
  node.textContent =
    Math.abs(minutes) < 90 ? format.format(minutes, 'minute') : format.format(Math.round(minutes / 60), 'hour');
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  node.title = `${new Date(iso).toLocaleString(undefined, { timeZoneName: 'short' })} (${zone})`;
}

/**
 * Sends a change to the inbox API with the page's CSRF token; the answer's JSON, or its problem, comes back. A request
 * that never reached the inbox answers status 0 with a detail that says nothing was sent.
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<Answer>}
 */
async function post(path, body = {}) {
  try {
    if (signedOutSeen) await takeUpSession();
    const response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-relay-csrf': csrfToken },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (response.status === 401) showSignedOut();
    return { ok: response.ok, status: response.status, data };
  } catch {
    return { ok: false, status: 0, data: { detail: unreachable } };
  }
}

/** What the header said of the session the page was opened with. */
const signedInAs = document.querySelector('header .who')?.textContent ?? '';

/** Marks the page signed out: its header no longer names whom its decisions would be recorded under. */
function showSignedOut() {
  signedOutSeen = true;
  const who = document.querySelector('header .who');
  if (who) who.textContent = 'Signed out';
}

/**
 * Takes up the session of a sign-in made in another tab: its token and name. A page whose approver changed is read
 * again, since what it may decide changed with them.
 */
async function takeUpSession() {
  const response = await fetch('/inbox/session');
  if (!response.ok) return;
  /** @type {{ csrfToken: string, approver: string }} */
  const session = await response.json();
  signedOutSeen = false;
  csrfToken = session.csrfToken;
  if (session.approver !== signedInApprover) {
    window.location.reload();
    return;
  }
  const who = document.querySelector('header .who');
  if (who) who.textContent = signedInAs;
}

/**
 * What a page says when the session it was opened with has ended: a link to sign in again in another tab, so what
 * was typed here stays.
 * @param {string} what what did not happen ("Not sent")
 * @param {string} then what to do once signed in again ("press the button again")
 * @returns {Array<Node | string>}
 */
function signInPrompt(what, then) {
  const next = `/?next=${encodeURIComponent(window.location.pathname)}`;
  return [
    `${what}: you are signed out. `,
    element('a', { href: next, target: '_blank', rel: 'noopener' }, ['Sign in again']),
    ` (in a new tab: what you typed stays here), then ${then}.`,
  ];
}

/** @param {string} runId */
function runPath(runId) {
  return `/inbox/runs/${encodeURIComponent(runId)}`;
}

/** Goes to the sign-in form, which comes back to this page once signed in. */
function signInAgain() {
  const here = window.location.pathname;
  window.location.assign(here.startsWith('/inbox/runs/') ? `/?next=${encodeURIComponent(here)}` : '/');
}

/**
 * Tells `ended` once the server ends a live stream because the session expired, rather than leave the page quiet (or
 * reconnecting, refused) on what it showed last.
 * @param {EventSource} source
 * @param {() => void} ended
 */
function endWithSession(source, ended) {
  source.addEventListener('signed-out', () => {
    source.close();
    ended();
  });
}

/**
 * Carries word between this browser's inbox tabs that one signed out: the others check their session at once and,
 * signed out, end their streams, rather than go on showing the tenant's data until their session would have ended.
 * Absent where the browser has none: those tabs' streams end at the session's end.
 */
const sessionChannel =
  typeof BroadcastChannel === 'function' ? new BroadcastChannel('relay-e-inbox-session') : undefined;

/** What each live stream of this tab does when another tab signed out. @type {Set<() => void>} */
const signedOutElsewhere = new Set();
sessionChannel?.addEventListener('message', (event) => {
  if (event.data === 'signed-out') for (const check of signedOutElsewhere) check();
});

/**
 * Signs out with a request of the page's own, so that the other tabs are told only once the cookie is gone, then goes
 * to the sign-in form. A request refused or not sent is left to the form, which posts as it would without script and
 * shows what the server answers.
 * @param {HTMLFormElement} form
 */
function signOutInEveryTab(form) {
  if (!sessionChannel) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    fetch(form.action, { method: 'POST', redirect: 'manual' }).then(
      (response) => {
        // The sign-out answers with a redirect to the sign-in form, which a manual redirect leaves opaque.
        if (response.type !== 'opaqueredirect' && !response.ok) return form.submit();
        sessionChannel.postMessage('signed-out');
        window.location.assign('/');
      },
      () => form.submit(),
    );
  });
}

/** How long to wait before opening a refused stream again: doubling from the first, up to the last. */
const firstReopenMs = 2_000;
const lastReopenMs = 30_000;

/**
 * Follows a live stream and keeps following it. The browser gives up for good on a stream whose reconnect is
 * refused (401 once the session ended elsewhere, 503 when the API cannot reach Temporal): then the session is
 * checked, and without one the page goes back to the sign-in form, unless `staysSignedOut` says the page stays
 * (going would lose what was typed there): the stream is then opened again later, to follow on once signed in again
 * in another tab. With a session the page says it is not live and opens it again. A probe that answers 404 says
 * there is nothing to follow: `gone` is told, and the stream is not opened again.
 * @param {string} url
 * @param {string} probe a GET that answers 401 without a session
 * @param {(source: EventSource, reopened: boolean) => void} listen adds the stream's own listeners
 * @param {(live: boolean) => void} showLive
 * @param {{ gone?: () => void, staysSignedOut?: () => boolean }} [told]
 * @returns {{ stop: () => void }}
 */
function followLive(url, probe, listen, showLive, { gone, staysSignedOut } = {}) {
  let delay = firstReopenMs;
  let stopped = false;
  /** @type {EventSource | undefined} */
  let current;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let reopening;
  /** @param {boolean} reopened */
  function open(reopened) {
    if (stopped) return;
    const source = new EventSource(url);
    current = source;
    endWithSession(source, () => {
      if (!stopped) sessionEnded();
    });
    listen(source, reopened);
    source.addEventListener('open', () => {
      delay = firstReopenMs;
      showLive(true);
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED && !stopped) void afterRefused();
    });
  }
  async function afterRefused() {
    const status = await probeStatus(probe);
    if (stopped) return;
    if (status === 401) {
      sessionEnded();
      return;
    }
    if (status === 404 && gone) {
      gone();
      return;
    }
    showLive(false);
    reopenLater();
  }
  function sessionEnded() {
    if (staysSignedOut?.()) reopenLater();
    else signInAgain();
  }
  /** Told that another tab signed out: ends the stream if the session did end (one signed in again meanwhile goes on). */
  async function checkSession() {
    if ((await probeStatus(probe)) !== 401 || stopped) return;
    clearTimeout(reopening);
    current?.close();
    sessionEnded();
  }
  signedOutElsewhere.add(checkSession);
  function reopenLater() {
    reopening = setTimeout(() => open(true), delay);
    delay = Math.min(delay * 2, lastReopenMs);
  }
  open(false);
  return {
    stop() {
      stopped = true;
      clearTimeout(reopening);
      current?.close();
      signedOutElsewhere.delete(checkSession);
    },
  };
}

/**
 * The status the server answers a probe with; an unreachable server says nothing yet.
 * @param {string} probe
 * @returns {Promise<number | undefined>}
 */
async function probeStatus(probe) {
  try {
    return (await fetch(probe)).status;
  } catch {
    return undefined;
  }
}

// ---- The list of pending approvals ----

/** @typedef {{ key: string, drawn: string, draw: () => HTMLElement }} ListRow */

/** @param {HTMLElement} list */
function startApprovalsList(list) {
  const status = /** @type {HTMLElement} */ (document.getElementById('approvals-status'));
  // What the list says of itself, kept so a warning that it may be out of date can be taken back.
  let listed = '';
  /** Each listed row by its call (or unanswered run), with the JSON it was drawn from. */
  /** @type {Map<string, { item: HTMLElement, drawn: string }>} */
  const rows = new Map();
  /** @param {EventSource} stream */
  function listen(stream) {
    stream.addEventListener('approvals', (message) => {
      /** @type {{ approvals: InboxApproval[], unanswered: Array<{ runId: string, error: string }>, hasMore: boolean, limit: number }} */
      const { approvals, unanswered, hasMore, limit } = JSON.parse(/** @type {MessageEvent<string>} */ (message).data);
      listed = describeList(approvals.length, unanswered.length, hasMore, limit);
      status.textContent = listed;
      drawRowsInPlace(list, rows, approvalRows(approvals, unanswered));
    });
    // The server could not read the list: it stays as it was, and may be out of date until a read succeeds again.
    stream.addEventListener('stale', () => {
      status.textContent = `${listed} The list could not be refreshed and may be out of date; trying again…`.trim();
    });
    stream.addEventListener('current', () => {
      status.textContent = listed;
    });
    stream.addEventListener('error', () => {
      if (stream.readyState === EventSource.CONNECTING) status.textContent = 'Reconnecting…';
    });
  }
  /** @param {boolean} live */
  function showLive(live) {
    if (live && listed) status.textContent = listed;
    if (!live) status.textContent = `Not live: the list stopped following changes; trying again… ${listed}`.trim();
  }
  followLive('/inbox/approvals/stream', '/inbox/approvals', listen, showLive);
  trimRunIdOnOpen();
}

/** The server trims the id too; trimming here keeps the address the browser shows clean. */
function trimRunIdOnOpen() {
  const runId = /** @type {HTMLInputElement | null} */ (document.getElementById('run-id'));
  document.getElementById('open-run')?.addEventListener('submit', () => {
    if (runId) runId.value = runId.value.trim();
  });
}

/**
 * The rows the list wants, in its order: the calls that wait, then the runs that did not answer.
 * @param {InboxApproval[]} approvals
 * @param {Array<{ runId: string, error: string }>} unanswered
 * @returns {ListRow[]}
 */
function approvalRows(approvals, unanswered) {
  return [
    ...approvals.map((approval) => ({
      key: `call ${approval.runId} ${approval.toolCallId}`,
      drawn: JSON.stringify(approval),
      draw: () => approvalListItem(approval),
    })),
    ...unanswered.map((run) => ({
      key: `run ${run.runId}`,
      drawn: JSON.stringify(run),
      draw: () => unansweredListItem(run),
    })),
  ];
}

/**
 * Draws the list again in place: a row that did not change stays the very element it was (keeping the keyboard
 * focus and the reader's place), new rows go in where they belong, and rows that went away are removed.
 * @param {HTMLElement} list
 * @param {Map<string, { item: HTMLElement, drawn: string }>} rows the rows listed now, by key; kept up to date
 * @param {ListRow[]} wanted
 */
function drawRowsInPlace(list, rows, wanted) {
  /** @type {HTMLElement[]} */
  const items = [];
  const kept = new Set();
  for (const { key, drawn, draw } of wanted) {
    let row = rows.get(key);
    if (row?.drawn !== drawn) {
      const item = draw();
      row?.item.replaceWith(item);
      row = { item, drawn };
      rows.set(key, row);
    }
    kept.add(key);
    items.push(row.item);
  }
  for (const [key, row] of rows) {
    if (kept.has(key)) continue;
    row.item.remove();
    rows.delete(key);
  }
  let cursor = list.firstElementChild;
  for (const item of items) {
    if (item === cursor) cursor = cursor.nextElementSibling;
    else list.insertBefore(item, cursor);
  }
}

/**
 * What the list says of itself: how many calls wait, how many runs did not answer, and whether more wait.
 * @param {number} waiting
 * @param {number} unanswered
 * @param {boolean} hasMore
 * @param {number} limit
 */
function describeList(waiting, unanswered, hasMore, limit) {
  return (
    (waiting === 0
      ? 'Nothing waits for a decision.'
      : `${waiting} tool call${waiting === 1 ? '' : 's'} wait${waiting === 1 ? 's' : ''} for a decision.`) +
    (unanswered === 0
      ? ''
      : ` ${unanswered} waiting run${unanswered === 1 ? '' : 's'} did not answer in time (is a worker running?).`) +
    (hasMore ? ` More runs wait than the ${limit} newest listed here.` : '')
  );
}

/** @param {{ runId: string, error: string }} run */
function unansweredListItem(run) {
  return element('li', { 'data-unanswered-run': run.runId }, [
    element('h2', {}, [element('a', { href: runPath(run.runId) }, [`Run ${run.runId} did not answer`])]),
    element('p', { class: 'muted' }, [run.error]),
  ]);
}

/** @param {InboxApproval} approval */
function approvalListItem(approval) {
  const link = element('a', { href: runPath(approval.runId) }, [`${approval.toolName} in run ${approval.runId}`]);
  const soon = new Date(approval.expiresAt).getTime() - Date.now() < soonMs;
  return element('li', { 'data-tool-call-id': approval.toolCallId, ...(soon ? { class: 'expires-soon' } : {}) }, [
    element('h2', {}, [link]),
    ...(approval.description ? [element('p', { class: 'description' }, [approval.description])] : []),
    element('p', { class: 'muted' }, [
      `Model ${approval.model}${approval.userId ? `, user ${approval.userId}` : ''}, step ${approval.step}; expires `,
      relativeTime(approval.expiresAt),
      ...(soon ? [' ', element('strong', { class: 'soon' }, ['(soon)'])] : []),
      ...(approval.approvers ? [`. Only ${approval.approvers.join(' or ')} may decide it`] : []),
      ...(approval.approvalsRequired === undefined
        ? []
        : [`. ${approvalsSoFar(approval.approvalsRequired, approval.approvals ?? [])}`]),
    ]),
    inputBlock(approval.input),
  ]);
}

/**
 * A call's input as the list shows it: in full when short, folded behind its size when long.
 * @param {unknown} input
 */
function inputBlock(input) {
  const json = prettyJson(input);
  const pre = element('pre', { 'aria-label': 'Proposed input' }, [json]);
  if (json.length <= foldedInputLength) return pre;
  const size = json.length < 10_000 ? `${(json.length / 1024).toFixed(1)} KB` : `${Math.round(json.length / 1024)} KB`;
  return element('details', { class: 'input' }, [element('summary', {}, [`${size} of JSON: show the input`]), pre]);
}

// ---- One run ----

/**
 * The form of a waiting call as the run page keeps it.
 * @typedef {{ form: HTMLElement, approvals: number, approval: PendingApproval, sending: () => boolean, unsent: () => string, decidedHere: boolean }} ShownForm
 */

/**
 * The outcome shown in place of a form whose call was decided, expired or cancelled elsewhere.
 * @typedef {{ node: HTMLElement, unsent: string }} ClosedForm
 */

/**
 * One run's page, as its parts share it.
 * @typedef {object} RunPage
 * @property {HTMLElement} root
 * @property {string} runId
 * @property {HTMLElement} summary
 * @property {HTMLElement} timeline
 * @property {HTMLButtonElement} cancel
 * @property {HTMLButtonElement} keep
 * @property {HTMLElement} nothingWaits
 * @property {HTMLElement} decided where a decision's outcome is said
 * @property {HTMLElement} live
 * @property {Map<string, ShownForm>} forms the form of each waiting call, by call id, with the count of approvals it
 *   was drawn with
 * @property {Map<string, { type: string, text: string }>} outcomes what became of each call that no longer waits, from
 *   the run's events
 * @property {Map<string, ClosedForm>} closed by call id
 * @property {Map<number, HTMLElement>} streaming
 * @property {RunSnapshot | undefined} lastSnapshot
 * @property {string} runEnded what became of the run, once it ended
 * @property {boolean} isGone
 * @property {{ stop: () => void } | undefined} follow
 */

/** @param {HTMLElement} root */
function startRunPage(root) {
  const page = runPage(root);
  page.follow = followLive(
    `${runPath(page.runId)}/events`,
    `${runPath(page.runId)}/state`,
    (source, reopened) => listenToRun(page, source, reopened),
    (isLive) => showRunLive(page, isLive),
    { gone: () => void refreshRun(page), staysSignedOut: () => staysSignedOut(page) },
  );
  listenToCancelButtons(page);
  page.summary.tabIndex = -1;
  void refreshRun(page);
}

/**
 * The run page's parts, with the notes it adds to the page drawn in.
 * @param {HTMLElement} root
 * @returns {RunPage}
 */
function runPage(root) {
  const summary = /** @type {HTMLElement} */ (document.getElementById('run-summary'));
  const pending = /** @type {HTMLElement} */ (document.getElementById('pending'));
  const nothingWaits = element('p', { class: 'muted', hidden: '' }, ['No tool call waits.']);
  pending.append(nothingWaits);
  // Outside the forms, which go away once decided: the outcome stays readable and keeps the keyboard focus.
  const decided = element('p', { id: 'decision-status', role: 'status', tabindex: '-1' });
  pending.before(decided);
  const live = element('p', { id: 'run-live', role: 'status' });
  summary.after(live);
  return {
    root,
    runId: root.dataset['runId'] ?? '',
    summary,
    timeline: /** @type {HTMLElement} */ (document.getElementById('timeline')),
    cancel: /** @type {HTMLButtonElement} */ (document.getElementById('cancel-run')),
    keep: /** @type {HTMLButtonElement} */ (document.getElementById('keep-run')),
    nothingWaits,
    decided,
    live,
    forms: new Map(),
    outcomes: new Map(),
    closed: new Map(),
    streaming: new Map(),
    lastSnapshot: undefined,
    runEnded: '',
    isGone: false,
    follow: undefined,
  };
}

/**
 * Reads the run's state and draws it; a run that is gone, or a session that ended, is said instead.
 * @param {RunPage} page
 */
async function refreshRun(page) {
  if (page.isGone) return;
  /** @type {Response} */
  let response;
  try {
    response = await fetch(`${runPath(page.runId)}/state`);
  } catch {
    // The page says it is not live while the inbox cannot be reached, and reads the state again once it can.
    return;
  }
  if (response.status === 401) {
    if (!staysSignedOut(page)) signInAgain();
    return;
  }
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    page.summary.textContent = problem.detail ?? `Could not read the run (${response.status}).`;
    if (response.status === 404) goneForGood(page);
    return;
  }
  /** @type {{ snapshot: RunSnapshot, tools: Tool[] }} */
  const { snapshot, tools } = await response.json();
  // Read with a session signed in again in another tab: the page takes it up (a change would, if this fails).
  if (signedOutSeen) await takeUpSession().catch(() => undefined);
  page.lastSnapshot = snapshot;
  drawSummary(page);
  const running = snapshot.status === 'running' || snapshot.status === 'awaiting_approval';
  page.cancel.hidden = !running;
  if (!running) resetCancel(page);
  drawForms(page, snapshot.pendingApprovals, tools);
}

/**
 * Draws the forms of the calls that wait: new ones go in, changed ones are drawn again, settled ones are closed.
 * @param {RunPage} page
 * @param {PendingApproval[]} waiting
 * @param {Tool[]} tools
 */
function drawForms(page, waiting, tools) {
  const open = new Set(waiting.map((approval) => approval.toolCallId));
  for (const [id, shown] of page.forms) {
    // A decision on its way settles the form itself, once the run answers it.
    if (!open.has(id) && !shown.sending()) closeForm(page, id, shown);
  }
  for (const approval of waiting) {
    // A call that needs several approvers is drawn again once it has another approval; one whose decision is on its
    // way is drawn once the run answers it (its answer reads the run again).
    const approvals = approval.approvals?.length ?? 0;
    const shown = page.forms.get(approval.toolCallId);
    if (shown?.approvals === approvals || shown?.sending()) continue;
    const tool = tools.find((entry) => entry.name === approval.toolName);
    const form = shownForm(page, approval, approvals, tool);
    page.forms.set(approval.toolCallId, form);
    if (shown) redrawForm(shown.form, form.form);
    else page.nothingWaits.before(form.form);
  }
  page.nothingWaits.hidden = page.forms.size > 0;
}

/**
 * Puts a form drawn again in place of the one shown, with what the approver typed there and where they were typing:
 * another approver's approval must not wipe a reason half written.
 * @param {HTMLElement} shown
 * @param {HTMLElement} drawn
 */
function redrawForm(shown, drawn) {
  const active = document.activeElement;
  const typingIn = active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement ? active : undefined;
  /** @type {HTMLInputElement | HTMLTextAreaElement | undefined} */
  let focusTo;
  for (const field of shown.querySelectorAll('input, textarea')) {
    const typed = /** @type {HTMLInputElement | HTMLTextAreaElement} */ (field);
    const kept = /** @type {HTMLInputElement | HTMLTextAreaElement | null} */ (
      drawn.querySelector(`#${CSS.escape(typed.id)}`)
    );
    if (!kept) continue;
    if (typed === typingIn) focusTo = kept;
    if (kept.readOnly || kept.disabled || kept.value === typed.value) continue;
    kept.value = typed.value;
    // The field's own listeners count the reason, check the input and enable the buttons.
    kept.dispatchEvent(new Event('input'));
  }
  const [start, end] = [typingIn?.selectionStart ?? null, typingIn?.selectionEnd ?? null];
  shown.replaceWith(drawn);
  if (!focusTo) return;
  focusTo.focus();
  if (start !== null && end !== null) focusTo.setSelectionRange(start, end);
}

/**
 * The form of a waiting call, whose decision, taken or refused, is said above the forms.
 * @param {RunPage} page
 * @param {PendingApproval} approval
 * @param {number} approvals
 * @param {Tool | undefined} tool
 * @returns {ShownForm}
 */
function shownForm(page, approval, approvals, tool) {
  /** @type {ShownForm} */
  const form = {
    ...decisionForm(page.runId, approval, tool, {
      decided: (outcome) => {
        form.decidedHere = true;
        announce(page, outcome);
      },
      refused: (refusal) => announce(page, refusal),
    }),
    approvals,
    approval,
    decidedHere: false,
  };
  return form;
}

/**
 * Says how a decision went (taken; or refused: decided elsewhere, ended, not yours) and reads the run again.
 * @param {RunPage} page
 * @param {string} text
 */
function announce(page, text) {
  page.decided.textContent = text;
  page.decided.focus();
  void refreshRun(page);
}

/**
 * Whether the page stays once the session ended, rather than go to the sign-in form: it does while a form holds
 * something typed (an edited input, a reason) or a decision on its way, which going would lose. It then says it is
 * signed out and offers to sign in again in a new tab, in place of the run's summary until it reads the run again.
 * @param {RunPage} page
 */
function staysSignedOut(page) {
  const typing = [...page.forms.values()].some((shown) => shown.sending() || shown.unsent() !== '');
  if (!typing) return false;
  showSignedOut();
  page.summary.replaceChildren(...signInPrompt('Not up to date', 'carry on here'));
  return true;
}

/**
 * Takes a form away once its call no longer waits. Decided here, it goes (the decision's status says how it went);
 * decided, expired or cancelled elsewhere, it makes way for what happened, and says what typed here was not sent.
 * @param {RunPage} page
 * @param {string} id
 * @param {ShownForm} shown
 */
function closeForm(page, id, shown) {
  page.forms.delete(id);
  const hadFocus = shown.form.contains(document.activeElement);
  if (shown.decidedHere) {
    shown.form.remove();
    return;
  }
  const title = shown.form.querySelector('h3')?.textContent ?? id;
  const node = element('section', { class: 'approval closed', 'data-tool-call-id': id, tabindex: '-1' }, [
    element('h3', {}, [title]),
    element('p', { class: 'outcome', role: 'status' }),
  ]);
  const entry = { node, unsent: shown.unsent() };
  page.closed.set(id, entry);
  drawOutcome(page, id, entry);
  shown.form.replaceWith(node);
  if (hadFocus) node.focus();
}

/** @param {RunPage} page @param {string} id @param {ClosedForm} entry */
function drawOutcome(page, id, entry) {
  const outcome = page.outcomes.get(id)?.text ?? (page.runEnded || 'It no longer waits for a decision');
  const text = `${outcome}${entry.unsent ? `; ${entry.unsent}` : ''}.`;
  const said = entry.node.querySelector('.outcome');
  if (said && said.textContent !== text) said.textContent = text;
}

/**
 * The run's state, and what became of its calls that waited: a completed run may have run none of them.
 * @param {RunPage} page
 */
function drawSummary(page) {
  if (!page.lastSnapshot) return;
  page.summary.replaceChildren(...describeSnapshot(page.lastSnapshot, [...page.outcomes.values()]));
}

/**
 * Notes what became of a call (or the run) from one of the run's events, and shows it where a form was.
 * @param {RunPage} page
 * @param {RunEvent} event
 */
function noteOutcome(page, event) {
  const text = outcomeOf(event);
  if (text === undefined) return;
  if (terminalEvents.has(event.type)) {
    page.runEnded = text;
  } else {
    page.outcomes.set(String(event['toolCallId']), { type: event.type, text });
  }
  for (const [id, entry] of page.closed) drawOutcome(page, id, entry);
  drawSummary(page);
}

/** @param {RunPage} page @param {EventSource} events @param {boolean} reopened */
function listenToRun(page, events, reopened) {
  // A reopened stream tells the run from its start again: it replaces what the page showed.
  if (reopened) events.addEventListener('open', () => clearTimeline(page.timeline, page.streaming));
  events.addEventListener('message', (message) => {
    /** @type {RunEvent} */
    const event = JSON.parse(message.data);
    if (event.type === 'model_delta') {
      showDelta(page.timeline, page.streaming, event);
      return;
    }
    // Why the run cannot answer, until it answers again: not part of its timeline.
    if (event.type === 'run_unavailable' || event.type === 'run_available') {
      const problem = /** @type {{ detail?: string } | undefined} */ (event['problem']);
      showRunStalled(page, event.type === 'run_unavailable' ? (problem?.detail ?? '') : undefined);
      return;
    }
    page.streaming.get(event.step)?.remove();
    page.streaming.delete(event.step);
    page.timeline.append(timelineItem(event));
    noteOutcome(page, event);
    if (stateChangingEvents.has(event.type)) void refreshRun(page);
    if (terminalEvents.has(event.type)) events.close();
  });
  // The connection dropped and the browser reconnects on its own: the page is not live until it has.
  events.addEventListener('error', () => {
    if (events.readyState === EventSource.CONNECTING) showRunLive(page, false);
  });
}

/**
 * Says why the run cannot answer (the API's own words: no worker, or a workflow task the workers fail), or takes the
 * note away once it answers again.
 * @param {RunPage} page @param {string | undefined} why
 */
function showRunStalled(page, why) {
  if (page.isGone) return;
  page.live.textContent = why === undefined ? '' : `The run cannot answer right now: ${why}`;
}

/** @param {RunPage} page @param {boolean} isLive */
function showRunLive(page, isLive) {
  if (page.isGone) return;
  const wasLive = page.live.textContent === '';
  page.live.textContent = isLive ? '' : 'Not live: this page stopped following the run; trying again…';
  // What changed while the page was not following the run shows only on a fresh read, which draws the forms again.
  if (!isLive || !wasLive) void refreshRun(page);
}

/**
 * No run of the tenant has this id: nothing will change, so the page stops asking and says so.
 * @param {RunPage} page
 */
function goneForGood(page) {
  page.isGone = true;
  page.follow?.stop();
  page.live.textContent = 'Nothing to follow: no run of yours has this id.';
  for (const section of page.root.querySelectorAll('section')) section.setAttribute('hidden', '');
  page.cancel.hidden = page.keep.hidden = true;
}

/**
 * Cancelling takes a second press, on a button that says what it does; "Keep it running" takes it back.
 * @param {RunPage} page
 */
function listenToCancelButtons(page) {
  const { cancel, keep } = page;
  keep.addEventListener('click', () => {
    resetCancel(page);
    cancel.focus();
  });
  cancel.addEventListener('click', async () => {
    if (cancel.dataset['confirming'] === undefined) {
      cancel.dataset['confirming'] = '';
      cancel.textContent = 'Really cancel this run?';
      keep.hidden = false;
      return;
    }
    cancel.disabled = true;
    const result = await post(`${runPath(page.runId)}/cancel`);
    resetCancel(page);
    showCancelResult(page.summary, result);
    cancel.disabled = false;
    page.summary.focus();
  });
}

/** @param {RunPage} page */
function resetCancel(page) {
  page.cancel.textContent = 'Cancel this run';
  delete page.cancel.dataset['confirming'];
  page.keep.hidden = true;
}

/** @param {HTMLElement} summary @param {Answer} result */
function showCancelResult(summary, result) {
  if (result.status === 401) summary.replaceChildren(...signInPrompt('Not sent', 'press the button again'));
  else
    summary.textContent = !result.ok
      ? (result.data.detail ?? 'Could not cancel the run.')
      : result.data.status === 'cancelling'
        ? 'Cancelling the run…'
        : `The run had already ended (${result.data.status}).`;
}

/**
 * Empties the timeline before a reopened stream fills it again.
 * @param {HTMLElement} timeline
 * @param {Map<number, HTMLElement>} streaming
 */
function clearTimeline(timeline, streaming) {
  timeline.replaceChildren();
  streaming.clear();
}

/**
 * The run's state in a line, and for a run that ended, what became of the calls that waited for a decision: a
 * completed run whose calls were all rejected or expired did none of them, and does not read as a success.
 * @param {RunSnapshot} snapshot
 * @param {Array<{ type: string }>} outcomes
 */
function describeSnapshot(snapshot, outcomes) {
  const count = (/** @type {string} */ type) => outcomes.filter((outcome) => outcome.type === type).length;
  const notRun = [
    [count('tool_rejected'), 'rejected'],
    [count('tool_approval_timed_out'), 'expired'],
    [count('tool_cancelled'), 'cancelled'],
  ].filter(([n]) => Number(n) > 0);
  const ran = count('tool_approved');
  const unsure = snapshot.status === 'completed' && notRun.length > 0 && ran === 0;
  const parts = [
    element('span', { class: `status-${unsure ? 'completed-undone' : snapshot.status}` }, [
      `Status: ${snapshot.status.replace('_', ' ')}`,
    ]),
    ` · model ${snapshot.model} · step ${snapshot.step} of ${snapshot.maxSteps}`,
  ];
  if (notRun.length > 0 || (ran > 0 && snapshot.status !== 'awaiting_approval')) {
    const said = notRun.map(([n, what]) => `${n} call${n === 1 ? '' : 's'} ${what}, not executed`);
    if (ran > 0) said.unshift(`${ran} call${ran === 1 ? '' : 's'} approved`);
    parts.push(element('span', { class: 'calls' }, [` · ${said.join(', ')}`]));
  }
  if (snapshot.output !== undefined)
    parts.push(element('span', { class: 'output' }, [` · answer: ${snapshot.output}`]));
  if (snapshot.error !== undefined) parts.push(` · error: ${snapshot.error}`);
  return parts;
}

/**
 * What became of a waiting call (or the run), as a run event says it; undefined for events that settle nothing.
 * @param {RunEvent} event
 * @returns {string | undefined}
 */
function outcomeOf(event) {
  const at = `at ${timeOf(event.at)}`;
  switch (event.type) {
    case 'tool_approved':
      return `Approved by ${approvedBy(event)} ${at}${event['edited'] ? ' with an edited input' : ''}`;
    case 'tool_rejected':
      return `Rejected by ${event['approver'] ?? 'someone'} ${at}${event['reason'] ? `: “${event['reason']}”` : ''}`;
    case 'tool_approval_timed_out':
      return `Expired ${at} without a decision`;
    case 'tool_cancelled':
      return `Run cancelled ${at}`;
    case 'run_cancelled':
      return `Run cancelled ${at}`;
    case 'run_failed':
      return `Run failed ${at}`;
    case 'run_completed':
      return `Run ended ${at}`;
    default:
      return undefined;
  }
}

/**
 * Shows streamed text of a step as it arrives; the durable `model_responded` event replaces it.
 * @param {HTMLElement} timeline
 * @param {Map<number, HTMLElement>} streaming
 * @param {RunEvent} event
 */
function showDelta(timeline, streaming, event) {
  let item = streaming.get(event.step);
  if (!item) {
    item = element('li', { class: 'streaming', 'aria-live': 'off' }, [
      element('span', { class: 'type' }, ['Model is writing…']),
      element('pre', { 'data-streamed-text': '' }),
    ]);
    streaming.set(event.step, item);
    timeline.append(item);
  }
  item.querySelector('pre')?.append(String(event['text'] ?? ''));
}

/**
 * The words of a run event in the timeline: its title, and what follows it.
 * @typedef {{ title: string, details?: HTMLElement[] }} TimelineWords
 */
/** @typedef {(event: RunEvent, tool: string) => TimelineWords} WordsOf */

/** @param {string} value */
function paragraph(value) {
  return element('p', {}, [value]);
}

/** @param {string} label @param {unknown} value */
function jsonBlock(label, value) {
  return element('pre', { 'aria-label': label }, [prettyJson(value)]);
}

/**
 * The reason given with an approval or a rejection, if one was.
 * @param {RunEvent} event
 */
function reasonLines(event) {
  return event['reason'] ? [paragraph(`Reason: ${event['reason']}`)] : [];
}

/**
 * Who approved a call, as its `tool_approved` event names them.
 * @param {RunEvent} event
 */
function approvedBy(event) {
  const all = Array.isArray(event['approvedBy']) ? event['approvedBy'].join(' and ') : undefined;
  return all ?? event['approver'] ?? 'someone';
}

/**
 * What approvers were told of a call, as a notice event says it.
 * @param {RunEvent} event
 * @param {string} tool
 */
function noticeAbout(event, tool) {
  return {
    'approval.requested': `that ${tool} waits`,
    'approval.added': `that ${tool} got another approval`,
    'approval.expiring': `that ${tool} still waits and expires soon`,
    'approval.decided': `how the wait for ${tool} ended`,
  }[String(event['notice'])];
}

/** Each event type's words, given the event and the call it is about ("name (id)"). */
const timelineWords = new Map(
  /** @type {Array<[string, WordsOf]>} */ ([
    [
      'run_started',
      (event) => ({
        title: `Run started with ${event['model']}`,
        details: [paragraph(`Tools: ${/** @type {string[]} */ (event['tools']).join(', ') || 'none'}`)],
      }),
    ],
    [
      'model_responded',
      (event) => ({
        title: `Model replied (step ${event.step})`,
        details: [
          ...(typeof event['text'] === 'string' && event['text'] !== ''
            ? [element('pre', { class: 'model-text' }, [event['text']])]
            : []),
          ...(event['storedText'] !== undefined
            ? [paragraph('Its text is long and kept in the worker’s payload store.')]
            : []),
          ...(Number(event['toolCallCount']) > 0
            ? [paragraph(`Proposes ${event['toolCallCount']} tool call(s).`)]
            : []),
        ],
      }),
    ],
    [
      'tool_call_validated',
      (event, tool) => ({ title: `${tool}: input checked`, details: [jsonBlock('Input', event['input'])] }),
    ],
    [
      'tool_validation_failed',
      (event, tool) => ({ title: `${tool}: invalid input`, details: [paragraph(String(event['error']))] }),
    ],
    [
      'tool_awaiting_approval',
      (event, tool) => ({ title: `${tool} waits for approval until ${timeOf(String(event['expiresAt']))}` }),
    ],
    [
      'tool_approval_added',
      (event, tool) => ({
        title: `${tool}: approval ${event['approvals']} of ${event['approvalsRequired']}, by ${event['approver']}`,
        details: reasonLines(event),
      }),
    ],
    [
      'tool_approved',
      (event, tool) => ({
        title: `${tool} approved by ${approvedBy(event)}${event['edited'] ? ' with an edited input' : ''}`,
        details: [...reasonLines(event), jsonBlock('Input that runs', event['input'])],
      }),
    ],
    [
      'tool_rejected',
      (event, tool) => ({
        title: `${tool} rejected by ${event['approver'] ?? 'someone'}`,
        details: reasonLines(event),
      }),
    ],
    ['tool_approval_timed_out', (_event, tool) => ({ title: `${tool}: nobody decided in time` })],
    [
      'decision_ignored',
      (event, tool) => {
        const about = tool || (typeof event['toolCallId'] === 'string' ? `call ${event['toolCallId']}` : 'no call');
        const who = typeof event['approver'] === 'string' ? ` from ${event['approver']}` : '';
        return {
          title: `A decision signalled${who} for ${about} was ignored`,
          details: [paragraph(String(event['error']))],
        };
      },
    ],
    [
      'tool_approval_not_required',
      (_event, tool) => ({ title: `${tool} needs no approval for this input (its approval rule)` }),
    ],
    [
      'tool_approval_notified',
      (event, tool) => ({
        title: `Approvers told ${noticeAbout(event, tool)} (webhook answered ${event['status']})`,
      }),
    ],
    [
      'tool_approval_notice_handed_off',
      (event, tool) => ({
        title: `Approvers are still being told ${noticeAbout(event, tool)}, by ${event['deliveredBy']}`,
      }),
    ],
    [
      'tool_approval_notice_failed',
      (event, tool) => ({
        title: `Approvers were not told ${noticeAbout(event, tool)}`,
        details: [paragraph(String(event['error']))],
      }),
    ],
    [
      'tool_succeeded',
      (event, tool) => ({
        title: `${tool} succeeded`,
        details: [
          jsonBlock('Output', event['output']),
          ...(event['truncated'] ? [paragraph('The output was cut short to fit what the run keeps.')] : []),
        ],
      }),
    ],
    ['tool_failed', (event, tool) => ({ title: `${tool} failed`, details: [paragraph(String(event['error']))] })],
    [
      'tool_cancelled',
      (event, tool) => {
        const stage = {
          checking_input: 'while its input was checked',
          awaiting_approval: 'while it waited for approval',
          executing: 'while it ran',
        }[String(event['stage'])];
        return { title: `${tool} cancelled${stage ? ` ${stage}` : ''}` };
      },
    ],
    [
      'transcript_compacted',
      (event) => {
        const texts = Number(event['elidedTexts'] ?? 0);
        return {
          title:
            `Transcript compacted: ${event['elidedResults']} older tool output(s)` +
            `${texts > 0 ? ` and ${texts} model text(s)` : ''} left out to keep it within its limit`,
          details: [paragraph(`${kilobytes(event['bytesBefore'])} → ${kilobytes(event['bytesAfter'])}`)],
        };
      },
    ],
    [
      'model_context_resent',
      (event) => ({
        title: 'The model call was sent again with the whole transcript (the worker no longer held its context)',
        details: [paragraph(String(event['error']))],
      }),
    ],
    ['events_dropped', (event) => ({ title: `${event['dropped']} earlier event(s) are no longer kept` })],
    [
      'run_completed',
      (event) => ({
        title: 'Run completed',
        details:
          typeof event['output'] === 'string' ? [element('pre', { class: 'model-text' }, [event['output']])] : [],
      }),
    ],
    ['run_failed', (event) => ({ title: 'Run failed', details: [paragraph(String(event['error']))] })],
    ['run_cancelled', () => ({ title: 'Run cancelled' })],
  ]),
);

/** @param {RunEvent} event */
function timelineItem(event) {
  const tool = typeof event['toolName'] === 'string' ? `${event['toolName']} (${event['toolCallId']})` : '';
  // An event this page does not know yet still reads as words.
  const { title, details = [] } = timelineWords.get(event.type)?.(event, tool) ?? {
    title: `${event.type.replaceAll('_', ' ')}${tool ? `: ${tool}` : ''}`,
  };
  return element('li', { 'data-event-type': event.type, 'data-seq': String(event.seq) }, [
    element('span', { class: 'type' }, [title]),
    ' ',
    element('time', { datetime: event.at, class: 'muted' }, [timeOf(event.at)]),
    ...details,
  ]);
}

/** @param {unknown} bytes */
function kilobytes(bytes) {
  return `${(Number(bytes) / 1024).toFixed(1)} KB`;
}

/**
 * What a call that needs several approvals has so far: "1 of 2 approvals (alice)".
 * @param {number} required
 * @param {Array<{ approver: string }>} given
 */
function approvalsSoFar(required, given) {
  const names = given.length === 0 ? '' : ` (${given.map((approval) => approval.approver).join(', ')})`;
  return `It needs ${required} different approvers: ${given.length} of ${required} approvals${names}.`;
}

/**
 * Why the signed-in approver cannot decide a call here, if so: its tool names other approvers, or they approved it
 * already and it waits for someone else (they may still reject it). The run refuses such a decision anyway.
 * @param {PendingApproval} approval
 * @returns {{ text: string, mayReject?: boolean } | undefined}
 */
function whyNotYours(approval) {
  if (approval.approvers && !approval.approvers.includes(signedInApprover)) {
    return { text: `You are signed in as ${signedInApprover}: only ${approval.approvers.join(' or ')} may decide it.` };
  }
  if (approval.approvals?.some((given) => given.approver === signedInApprover)) {
    return { text: 'You have approved it: it waits for another approver. You can still reject it.', mayReject: true };
  }
  return undefined;
}

/**
 * What the inbox says once an approval is taken: a call that needs more approvers still waits for them.
 * @param {{ approvals?: number, approvalsRequired?: number }} outcome
 */
function approvedText(outcome) {
  const { approvals, approvalsRequired } = outcome;
  if (approvals === undefined || approvalsRequired === undefined || approvals >= approvalsRequired) return 'Approved.';
  return `Your approval is in: ${approvals} of ${approvalsRequired}. The call waits for another approver.`;
}

/** The editor's height: its input's lines, within these. */
const editorRows = { fewest: 4, most: 24 };

/**
 * A decision form's parts, and where it is in its life: editing (its buttons follow the input's issues and the
 * reason's length), then `sending` one decision, which the run takes (`told.decided`, the form goes away) or refuses
 * (`told.refused`), or which was not sent (the form says why and is edited again). A call decided, expired or
 * cancelled elsewhere is settled by the run page.
 * @typedef {object} DecisionFormParts
 * @property {string} runId
 * @property {PendingApproval} approval
 * @property {{ decided: (outcome: string) => void, refused: (refusal: string) => void }} told
 * @property {string} id the prefix of its elements' ids
 * @property {string} named
 * @property {string} original the proposed input, as the editor first shows it
 * @property {boolean} editable
 * @property {{ text: string, mayReject?: boolean } | undefined} barred
 * @property {boolean} mayReject
 * @property {number} maxReasonLength
 * @property {HTMLTextAreaElement} input
 * @property {HTMLElement} issues
 * @property {HTMLInputElement} reason
 * @property {HTMLElement} reasonCount
 * @property {HTMLButtonElement} approve
 * @property {HTMLButtonElement} reject
 * @property {HTMLElement} result
 * @property {boolean} hasIssues
 * @property {boolean} sending
 * @property {ReturnType<typeof setTimeout> | undefined} pendingCheck
 */

/**
 * The form that decides one pending call: its input as editable JSON, checked against the tool's schema by the
 * server (the run's own validator) as it is typed, so issues show at their paths before anything is sent.
 * @param {string} runId
 * @param {PendingApproval} approval
 * @param {Tool | undefined} tool the tool's entry in the run's catalog, when the run has one
 * @param {{ decided: (outcome: string) => void, refused: (refusal: string) => void }} told `decided` once the run took
 *   the decision (the form goes away), `refused` when it refused it (the run is read again)
 * @returns {{ form: HTMLElement, sending: () => boolean, unsent: () => string }}
 */
function decisionForm(runId, approval, tool, told) {
  const parts = decisionFormParts(runId, approval, told);
  countReason(parts);
  enableButtons(parts);
  const form = decisionFormElement(parts, tool);
  listenToDecisionForm(parts, form);
  return { form, sending: () => parts.sending, unsent: () => unsentText(parts) };
}

/**
 * A decision form's fields and buttons, as it starts: editing.
 * @param {string} runId
 * @param {PendingApproval} approval
 * @param {DecisionFormParts['told']} told
 * @returns {DecisionFormParts}
 */
function decisionFormParts(runId, approval, told) {
  const id = `call-${approval.toolCallId.replace(/[^\w-]/g, '_')}`;
  const original = prettyJson(approval.input);
  const named = `${approval.toolName} (call ${approval.toolCallId})`;
  const barred = whyNotYours(approval);
  // A call that needs several approvals runs the input every approver saw: nobody edits it. Nor does one who may not
  // decide the call.
  const editable = approval.approvalsRequired === undefined && barred === undefined;
  const reason = /** @type {HTMLInputElement} */ (
    element('input', { id: `${id}-reason`, autocomplete: 'off', 'aria-describedby': `${id}-reason-count` })
  );
  const mayReject = barred === undefined || barred.mayReject === true;
  reason.disabled = !mayReject;
  return {
    runId,
    approval,
    told,
    id,
    named,
    original,
    editable,
    barred,
    mayReject,
    maxReasonLength: readMaxReasonLength(),
    input: inputEditor(id, original, editable),
    issues: element('ul', { id: `${id}-issues`, class: 'issues', 'aria-live': 'polite' }),
    reason,
    reasonCount: element('p', { id: `${id}-reason-count`, class: 'muted count' }),
    // Not a submit button: Enter in the reason field, typed to reject, must never approve (see the form's submit).
    approve: /** @type {HTMLButtonElement} */ (
      element('button', { type: 'button', 'aria-label': `Approve ${named}` }, ['Approve'])
    ),
    reject: /** @type {HTMLButtonElement} */ (
      element('button', { type: 'button', class: 'danger', 'aria-label': `Reject ${named}` }, ['Reject'])
    ),
    result: element('p', { role: 'status', tabindex: '-1', class: 'result' }),
    hasIssues: false,
    sending: false,
    pendingCheck: undefined,
  };
}

/**
 * The longest reason the run keeps, as the page was given it: the server refuses a longer one, and so does the
 * form, saying so (a maxlength would cut what was pasted without a word).
 */
function readMaxReasonLength() {
  return Number(document.querySelector('[data-max-reason-length]')?.getAttribute('data-max-reason-length') ?? Infinity);
}

/**
 * The proposed input as JSON in a textarea as tall as its lines (within editorRows), read-only unless editable.
 * @param {string} id
 * @param {string} original
 * @param {boolean} editable
 */
function inputEditor(id, original, editable) {
  /** @type {Record<string, string>} */
  const fixed = editable ? {} : { readonly: '' };
  const lines = original.split('\n').length;
  const rows = String(Math.min(Math.max(lines, editorRows.fewest), editorRows.most));
  return /** @type {HTMLTextAreaElement} */ (
    element(
      'textarea',
      { id: `${id}-input`, 'aria-describedby': `${id}-issues`, spellcheck: 'false', rows, ...fixed },
      [original],
    )
  );
}

/**
 * The form itself: the call, its input and the tool's schema, the reason, the buttons and what became of a press.
 * @param {DecisionFormParts} parts
 * @param {Tool | undefined} tool
 */
function decisionFormElement(parts, tool) {
  const { id, approval, named, input, reason, barred } = parts;
  const several = approval.approvalsRequired;
  return element(
    'form',
    { class: 'approval', 'aria-labelledby': `${id}-title`, 'data-tool-call-id': approval.toolCallId },
    [
      element('h3', { id: `${id}-title` }, [named]),
      ...(tool?.description ? [element('p', { class: 'description' }, [tool.description])] : []),
      element('p', { class: 'muted' }, [
        `Requested ${timeOf(approval.requestedAt)}, expires `,
        relativeTime(approval.expiresAt),
        '.',
        ...(approval.approvers ? [` Only ${approval.approvers.join(' or ')} may decide it.`] : []),
        ...(several === undefined ? [] : [` ${approvalsSoFar(several, approval.approvals ?? [])}`]),
      ]),
      element('label', { for: input.id }, [inputLabel(parts.editable, several)]),
      input,
      parts.issues,
      ...(tool === undefined
        ? []
        : [
            element('details', {}, [
              element('summary', {}, ['Tool input schema']),
              element('pre', {}, [prettyJson(tool.inputSchema)]),
            ]),
          ]),
      element('label', { for: reason.id }, ['Reason (required to reject)']),
      reason,
      parts.reasonCount,
      ...(barred ? [element('p', { class: 'muted', 'data-barred': '' }, [barred.text])] : []),
      parts.approve,
      parts.reject,
      parts.result,
    ],
  );
}

/**
 * What the input's label says may be done with it.
 * @param {boolean} editable
 * @param {number | undefined} several the approvals the call needs, when it needs several
 */
function inputLabel(editable, several) {
  if (editable) return 'Input (JSON; edit it to approve different arguments)';
  return several === undefined
    ? 'Input (JSON; read-only)'
    : `Input (JSON; it runs as proposed once ${several} approvers approve it)`;
}

/**
 * Follows what is typed and pressed in a decision form.
 * @param {DecisionFormParts} parts
 * @param {HTMLElement} form
 */
function listenToDecisionForm(parts, form) {
  parts.input.addEventListener('input', () => checkSoon(parts));
  parts.reason.addEventListener('input', () => reasonTyped(parts));
  // Enter in the reason field submits the form: it decides nothing, and says how to.
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    parts.result.textContent = 'Enter does not decide: press Approve or Reject.';
  });
  parts.approve.addEventListener('click', () => void approveCall(parts));
  parts.reject.addEventListener('click', () => void rejectCall(parts));
}

/** @param {DecisionFormParts} parts */
function reasonTooLong(parts) {
  return parts.reason.value.trim().length > parts.maxReasonLength;
}

/**
 * Whether each button can be pressed now: never twice for one decision, nor past what the run would refuse.
 * @param {DecisionFormParts} parts
 */
function enableButtons(parts) {
  parts.approve.disabled = parts.sending || parts.hasIssues || parts.barred !== undefined || reasonTooLong(parts);
  parts.reject.disabled = parts.sending || !parts.mayReject || reasonTooLong(parts);
}

/** @param {DecisionFormParts} parts */
function countReason(parts) {
  const { maxReasonLength, reasonCount } = parts;
  const length = parts.reason.value.trim().length;
  const over = length - maxReasonLength;
  reasonCount.textContent =
    over > 0
      ? `${length.toLocaleString()} of ${maxReasonLength.toLocaleString()} characters: ${over.toLocaleString()} too ` +
        'many. The run keeps no more, so shorten the reason to decide.'
      : `${length.toLocaleString()} of ${maxReasonLength.toLocaleString()} characters.`;
  reasonCount.classList.toggle('error', over > 0);
  parts.reason.setAttribute('aria-invalid', over > 0 ? 'true' : 'false');
}

/** @param {DecisionFormParts} parts */
function reasonTyped(parts) {
  const wasTooLong = parts.reasonCount.classList.contains('error');
  countReason(parts);
  enableButtons(parts);
  if (reasonTooLong(parts) !== wasTooLong)
    parts.result.textContent = reasonTooLong(parts) ? parts.reasonCount.textContent : '';
}

/**
 * Checks the input once typing pauses; such a check takes no focus.
 * @param {DecisionFormParts} parts
 */
function checkSoon(parts) {
  clearTimeout(parts.pendingCheck);
  parts.pendingCheck = setTimeout(async () => {
    const checked = await checkInput(parts);
    if (checked.problem) showProblem(parts, 'check', checked.problem, true);
  }, 250);
}

/**
 * The input checked by the run's validator; `problem` is an answer that was not a check (not sent, signed out,
 * the call no longer waits), which says nothing about the input.
 * @param {DecisionFormParts} parts
 * @returns {Promise<{ valid: boolean, value?: unknown, problem?: Answer }>}
 */
async function checkInput(parts) {
  let value;
  try {
    value = JSON.parse(parts.input.value);
  } catch (error) {
    showIssues(parts, [
      { path: '', message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` },
    ]);
    return { valid: false };
  }
  const answer = await post(`${runPath(parts.runId)}/check`, { toolCallId: parts.approval.toolCallId, input: value });
  if (!answer.ok) return { valid: false, problem: answer };
  showIssues(parts, answer.data.issues);
  return { valid: answer.data.valid, value };
}

/** @param {DecisionFormParts} parts @param {Issue[]} found */
function showIssues(parts, found) {
  parts.issues.replaceChildren(
    ...found.map((issue) => element('li', {}, [`${issue.path || '(input)'}: ${issue.message}`])),
  );
  parts.input.setAttribute('aria-invalid', found.length > 0 ? 'true' : 'false');
  parts.hasIssues = found.length > 0;
  enableButtons(parts);
}

/**
 * Says why a request did not decide: nothing sent, signed out, the input's issues at their paths, or a refusal by
 * the run (decided elsewhere, ended, not yours), which the page says above the forms before reading the run again.
 * @param {DecisionFormParts} parts
 * @param {'approve' | 'reject' | 'check'} what
 * @param {Answer} answer
 * @param {boolean} quietly a check made while typing: it takes no focus
 */
function showProblem(parts, what, answer, quietly) {
  const { result } = parts;
  const detail = answer.data.detail ?? `The inbox answered ${answer.status}.`;
  if (answer.status === 401) {
    result.replaceChildren(...signInPrompt('Not sent', 'press the button again'));
  } else if (answer.status === 403 || answer.status === 404 || answer.status === 409) {
    const yours = { approve: 'Your approval', reject: 'Your rejection', check: 'Your edit' }[what];
    parts.told.refused(`${yours} of ${parts.named} was not taken: ${detail}`);
    return;
  } else if (Array.isArray(answer.data.issues)) {
    showIssues(parts, answer.data.issues);
    result.textContent = detail;
  } else {
    result.textContent = answer.status === 0 ? unreachable : detail;
  }
  if (!quietly) result.focus();
}

/**
 * Leaves editing for sending: the buttons stay disabled until the decision is answered.
 * @param {DecisionFormParts} parts
 */
function startSending(parts) {
  parts.sending = true;
  enableButtons(parts);
  parts.result.textContent = '';
}

/** @param {DecisionFormParts} parts */
async function approveCall(parts) {
  // Pressed twice (a double click), it sends one decision.
  if (parts.sending) return;
  startSending(parts);
  clearTimeout(parts.pendingCheck);
  const checked = await checkInput(parts);
  if (!checked.valid) {
    parts.sending = false;
    enableButtons(parts);
    if (checked.problem) showProblem(parts, 'approve', checked.problem, false);
    else parts.input.focus();
    return;
  }
  const edited = JSON.stringify(checked.value) !== JSON.stringify(parts.approval.input);
  const reason = parts.reason.value.trim();
  await sendDecision(parts, 'approve', {
    ...(edited ? { input: checked.value } : {}),
    ...(reason ? { reason } : {}),
  });
}

/** @param {DecisionFormParts} parts */
async function rejectCall(parts) {
  const { reason, result } = parts;
  if (parts.sending) return;
  if (!reason.value.trim()) {
    reason.setAttribute('aria-invalid', 'true');
    result.textContent = 'Give a reason to reject.';
    reason.focus();
    return;
  }
  reason.removeAttribute('aria-invalid');
  startSending(parts);
  await sendDecision(parts, 'reject', { reason: reason.value.trim() });
}

/**
 * Sends a decision: taken, the form is done; not taken, it is edited again and says why.
 * @param {DecisionFormParts} parts
 * @param {'approve' | 'reject'} decision
 * @param {Record<string, unknown>} body
 */
async function sendDecision(parts, decision, body) {
  // The call as this page showed it: a run started again under this id since does not take the decision.
  const { toolCallId, requestedAt } = parts.approval;
  const answer = await post(`${runPath(parts.runId)}/${decision}`, { toolCallId, requestedAt, ...body });
  parts.sending = false;
  if (answer.ok) {
    parts.told.decided(decision === 'approve' ? approvedText(answer.data) : 'Rejected.');
    return;
  }
  enableButtons(parts);
  showProblem(parts, decision, answer, false);
}

/**
 * What typed here would be lost: edits to the input, a reason.
 * @param {DecisionFormParts} parts
 */
function unsentText(parts) {
  const edited = parts.input.value.trim() !== parts.original.trim();
  const reasoned = parts.reason.value.trim() !== '';
  if (edited && reasoned) return 'your edits and reason were not sent';
  if (edited) return 'your edits were not sent';
  if (reasoned) return 'your reason was not sent';
  return '';
}

// Expiry reads "in 4 min": it is drawn again as the minutes pass.
window.setInterval(() => {
  for (const node of document.querySelectorAll('time[data-relative]'))
    drawRelativeTime(/** @type {HTMLElement} */ (node));
}, 30_000);

const signOutForm = document.querySelector('form[action="/inbox/session/end"]');
if (signOutForm instanceof HTMLFormElement) signOutInEveryTab(signOutForm);
const approvalsList = document.querySelector('[data-inbox="approvals"]');
if (approvalsList instanceof HTMLElement) startApprovalsList(approvalsList);
const runRoot = document.querySelector('[data-inbox="run"]');
if (runRoot instanceof HTMLElement) startRunPage(runRoot);
