// The inbox's only script, served as is by the API (tsc copies it into dist; test/unit/http/inbox-script.test.ts
// type-checks it against the DOM). Everything it shows goes in through textContent, never as HTML.

/** @typedef {{ toolCallId: string, toolName: string, input: unknown, step: number, requestedAt: string, expiresAt: string, approvers?: string[], approvalsRequired?: number, approvals?: Array<{ approver: string, at: string, reason?: string }> }} PendingApproval */
/** @typedef {PendingApproval & { runId: string, model: string, userId?: string, inputSchema?: unknown }} InboxApproval */
/** @typedef {{ path: string, message: string }} Issue */
/** @typedef {{ type: string, seq: number, at: string, step: number, [field: string]: unknown }} RunEvent */
/** @typedef {{ name: string, inputSchema: unknown }} Tool */
/** @typedef {{ runId: string, status: string, model: string, step: number, maxSteps: number, output?: string, error?: string, stopReason?: string, pendingApprovals: PendingApproval[] }} RunSnapshot */

const csrfToken = document.querySelector('meta[name="relay-csrf"]')?.getAttribute('content') ?? '';
/** The name the signed-in key's decisions are recorded under. */
const signedInApprover = document.querySelector('meta[name="relay-approver"]')?.getAttribute('content') ?? '';
const terminalEvents = new Set(['run_completed', 'run_failed', 'run_cancelled']);
const stateChangingEvents = new Set([
  'tool_awaiting_approval',
  'tool_approval_added',
  'tool_approved',
  'tool_rejected',
  'tool_approval_timed_out',
  ...terminalEvents,
]);

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
 * Sends a change to the inbox API with the page's CSRF token; the answer's JSON, or its problem, comes back.
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ ok: boolean, status: number, data: any }>}
 */
async function post(path, body = {}) {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-relay-csrf': csrfToken },
    body: JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, data };
}

/** @param {string} runId */
function runPath(runId) {
  return `/inbox/runs/${encodeURIComponent(runId)}`;
}

/**
 * Goes back to the sign-in form once the server ends a live stream because the session expired, rather than leave
 * the page quiet (or reconnecting, refused) on what it showed last.
 * @param {EventSource} source
 */
function endWithSession(source) {
  source.addEventListener('signed-out', () => {
    source.close();
    window.location.assign('/');
  });
}

/** How long to wait before opening a refused stream again: doubling from the first, up to the last. */
const firstReopenMs = 2_000;
const lastReopenMs = 30_000;

/**
 * Follows a live stream and keeps following it. The browser gives up for good on a stream whose reconnect is
 * refused (401 once the session ended elsewhere, 503 when no worker answers): then the session is checked, and
 * without one the page goes back to the sign-in form; with one the page says it is not live and opens it again.
 * @param {string} url
 * @param {string} probe a GET that answers 401 without a session
 * @param {(source: EventSource, reopened: boolean) => void} listen adds the stream's own listeners
 * @param {(live: boolean) => void} showLive
 */
function followLive(url, probe, listen, showLive) {
  let delay = firstReopenMs;
  /** @param {boolean} reopened */
  function open(reopened) {
    const source = new EventSource(url);
    endWithSession(source);
    listen(source, reopened);
    source.addEventListener('open', () => {
      delay = firstReopenMs;
      showLive(true);
    });
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) void afterRefused();
    });
  }
  async function afterRefused() {
    if (await signedOut(probe)) {
      window.location.assign('/');
      return;
    }
    showLive(false);
    setTimeout(() => open(true), delay);
    delay = Math.min(delay * 2, lastReopenMs);
  }
  open(false);
}

/**
 * Whether the server says the session has ended; an unreachable server says nothing yet.
 * @param {string} probe
 */
async function signedOut(probe) {
  try {
    return (await fetch(probe)).status === 401;
  } catch {
    return false;
  }
}

// ---- The list of pending approvals ----

/** @param {HTMLElement} list */
function startApprovalsList(list) {
  const status = /** @type {HTMLElement} */ (document.getElementById('approvals-status'));
  // What the list says of itself, kept so a warning that it may be out of date can be taken back.
  let listed = '';
  /** @param {EventSource} stream */
  function listen(stream) {
    stream.addEventListener('approvals', (message) => {
      /** @type {{ approvals: InboxApproval[], unanswered: Array<{ runId: string, error: string }>, hasMore: boolean, limit: number }} */
      const { approvals, unanswered, hasMore, limit } = JSON.parse(/** @type {MessageEvent<string>} */ (message).data);
      listed = describeList(approvals.length, unanswered.length, hasMore, limit);
      status.textContent = listed;
      list.replaceChildren(...approvals.map(approvalListItem), ...unanswered.map(unansweredListItem));
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
  return element('li', { 'data-tool-call-id': approval.toolCallId }, [
    element('h2', {}, [link]),
    element('p', { class: 'muted' }, [
      `Model ${approval.model}${approval.userId ? `, user ${approval.userId}` : ''}, step ${approval.step}; ` +
        `expires ${timeOf(approval.expiresAt)}`,
      ...(approval.approvalsRequired === undefined
        ? []
        : [`. ${approvalsSoFar(approval.approvalsRequired, approval.approvals ?? [])}`]),
    ]),
    element('pre', { 'aria-label': 'Proposed input' }, [prettyJson(approval.input)]),
  ]);
}

// ---- One run ----

/** @param {HTMLElement} root */
function startRunPage(root) {
  const runId = root.dataset['runId'] ?? '';
  const summary = /** @type {HTMLElement} */ (document.getElementById('run-summary'));
  const pending = /** @type {HTMLElement} */ (document.getElementById('pending'));
  const timeline = /** @type {HTMLElement} */ (document.getElementById('timeline'));
  const cancel = /** @type {HTMLButtonElement} */ (document.getElementById('cancel-run'));
  /** The form of each waiting call, by call id, with the count of approvals it was drawn with. */
  /** @type {Map<string, { form: HTMLElement, approvals: number }>} */
  const forms = new Map();
  /** @type {Map<number, HTMLElement>} */
  const streaming = new Map();

  async function refresh() {
    const response = await fetch(`${runPath(runId)}/state`);
    if (!response.ok) {
      const problem = await response.json().catch(() => ({}));
      summary.textContent = problem.detail ?? `Could not read the run (${response.status}).`;
      return;
    }
    /** @type {{ snapshot: RunSnapshot, tools: Tool[] }} */
    const { snapshot, tools } = await response.json();
    summary.replaceChildren(...describeSnapshot(snapshot));
    cancel.hidden = snapshot.status !== 'running' && snapshot.status !== 'awaiting_approval';
    const open = new Set(snapshot.pendingApprovals.map((approval) => approval.toolCallId));
    for (const [id, { form }] of forms) {
      if (!open.has(id)) {
        form.remove();
        forms.delete(id);
      }
    }
    for (const approval of snapshot.pendingApprovals) {
      // A call that needs several approvers is drawn again once it has another approval.
      const approvals = approval.approvals?.length ?? 0;
      const shown = forms.get(approval.toolCallId);
      if (shown?.approvals === approvals) continue;
      const schema = tools.find((tool) => tool.name === approval.toolName)?.inputSchema;
      const form = decisionForm(runId, approval, schema, announceDecision);
      forms.set(approval.toolCallId, { form, approvals });
      if (shown) shown.form.replaceWith(form);
      else pending.append(form);
    }
    if (forms.size === 0) pending.replaceChildren(element('p', { class: 'muted' }, ['No tool call waits.']));
    else pending.querySelector(':scope > p.muted')?.remove();
  }

  // Outside the forms, which go away once decided: the outcome stays readable and keeps the keyboard focus.
  const decided = element('p', { id: 'decision-status', role: 'status', tabindex: '-1' });
  pending.before(decided);
  /** @param {string} outcome */
  function announceDecision(outcome) {
    decided.textContent = outcome;
    decided.focus();
    void refresh();
  }

  /** @param {EventSource} events @param {boolean} reopened */
  function listen(events, reopened) {
    // A reopened stream tells the run from its start again: it replaces what the page showed.
    if (reopened) events.addEventListener('open', () => clearTimeline(timeline, streaming));
    events.addEventListener('message', (message) => {
      /** @type {RunEvent} */
      const event = JSON.parse(message.data);
      if (event.type === 'model_delta') {
        showDelta(timeline, streaming, event);
        return;
      }
      streaming.get(event.step)?.remove();
      streaming.delete(event.step);
      timeline.append(timelineItem(event));
      if (stateChangingEvents.has(event.type)) void refresh();
      if (terminalEvents.has(event.type)) events.close();
    });
  }
  const live = element('p', { id: 'run-live', role: 'status' });
  summary.after(live);
  /** @param {boolean} isLive */
  function showLive(isLive) {
    const wasLive = live.textContent === '';
    live.textContent = isLive ? '' : 'Not live: this page stopped following the run; trying again…';
    // What changed while the page was not following the run shows only on a fresh read.
    if (!isLive || !wasLive) void refresh();
  }
  followLive(`${runPath(runId)}/events`, `${runPath(runId)}/state`, listen, showLive);

  cancel.addEventListener('click', async () => {
    cancel.disabled = true;
    const result = await post(`${runPath(runId)}/cancel`);
    summary.textContent = !result.ok
      ? (result.data.detail ?? 'Could not cancel the run.')
      : result.data.status === 'cancelling'
        ? 'Cancelling the run…'
        : `The run had already ended (${result.data.status}).`;
    cancel.disabled = false;
    summary.focus();
  });
  summary.tabIndex = -1;
  void refresh();
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

/** @param {RunSnapshot} snapshot */
function describeSnapshot(snapshot) {
  const parts = [
    element('span', { class: `status-${snapshot.status}` }, [`Status: ${snapshot.status.replace('_', ' ')}`]),
    ` · model ${snapshot.model} · step ${snapshot.step} of ${snapshot.maxSteps}`,
  ];
  if (snapshot.output !== undefined)
    parts.push(element('span', { class: 'output' }, [` · answer: ${snapshot.output}`]));
  if (snapshot.error !== undefined) parts.push(` · error: ${snapshot.error}`);
  return parts;
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

/** @param {RunEvent} event */
function timelineItem(event) {
  const tool = typeof event['toolName'] === 'string' ? `${event['toolName']} (${event['toolCallId']})` : '';
  /** @type {Array<Node | string>} */
  const details = [];
  const json = (/** @type {string} */ label, /** @type {unknown} */ value) =>
    details.push(element('pre', { 'aria-label': label }, [prettyJson(value)]));
  const text = (/** @type {string} */ value) => details.push(element('p', {}, [value]));
  let title = event.type;
  switch (event.type) {
    case 'run_started':
      title = `Run started with ${event['model']}`;
      text(`Tools: ${/** @type {string[]} */ (event['tools']).join(', ') || 'none'}`);
      break;
    case 'model_responded':
      title = `Model replied (step ${event.step})`;
      if (typeof event['text'] === 'string' && event['text'] !== '')
        details.push(element('pre', { class: 'model-text' }, [event['text']]));
      if (Number(event['toolCallCount']) > 0) text(`Proposes ${event['toolCallCount']} tool call(s).`);
      break;
    case 'tool_call_validated':
      title = `${tool}: input checked`;
      json('Input', event['input']);
      break;
    case 'tool_validation_failed':
      title = `${tool}: invalid input`;
      text(String(event['error']));
      break;
    case 'tool_awaiting_approval':
      title = `${tool} waits for approval until ${timeOf(String(event['expiresAt']))}`;
      break;
    case 'tool_approval_added':
      title = `${tool}: approval ${event['approvals']} of ${event['approvalsRequired']}, by ${event['approver']}`;
      if (event['reason']) text(`Reason: ${event['reason']}`);
      break;
    case 'tool_approved': {
      const approvedBy = Array.isArray(event['approvedBy']) ? event['approvedBy'].join(' and ') : undefined;
      const by = approvedBy ?? event['approver'] ?? 'someone';
      title = `${tool} approved by ${by}${event['edited'] ? ' with an edited input' : ''}`;
      if (event['reason']) text(`Reason: ${event['reason']}`);
      json('Input that runs', event['input']);
      break;
    }
    case 'tool_rejected':
      title = `${tool} rejected by ${event['approver'] ?? 'someone'}`;
      if (event['reason']) text(`Reason: ${event['reason']}`);
      break;
    case 'tool_approval_timed_out':
      title = `${tool}: nobody decided in time`;
      break;
    case 'tool_approval_not_required':
      title = `${tool} needs no approval for this input (its approval rule)`;
      break;
    case 'tool_approval_notified':
    case 'tool_approval_notice_failed':
    case 'tool_approval_notice_handed_off': {
      const about = {
        'approval.requested': `that ${tool} waits`,
        'approval.added': `that ${tool} got another approval`,
        'approval.expiring': `that ${tool} still waits and expires soon`,
        'approval.decided': `how the wait for ${tool} ended`,
      }[String(event['notice'])];
      if (event.type === 'tool_approval_notified') {
        title = `Approvers told ${about} (webhook answered ${event['status']})`;
      } else if (event.type === 'tool_approval_notice_handed_off') {
        title = `Approvers are still being told ${about}, by ${event['deliveredBy']}`;
      } else {
        title = `Approvers were not told ${about}`;
        text(String(event['error']));
      }
      break;
    }
    case 'tool_succeeded':
      title = `${tool} succeeded`;
      json('Output', event['output']);
      break;
    case 'tool_failed':
      title = `${tool} failed`;
      text(String(event['error']));
      break;
    case 'events_dropped':
      title = `${event['dropped']} earlier event(s) are no longer kept`;
      break;
    case 'run_completed':
      title = 'Run completed';
      if (typeof event['output'] === 'string') details.push(element('pre', { class: 'model-text' }, [event['output']]));
      break;
    case 'run_failed':
      title = 'Run failed';
      text(String(event['error']));
      break;
    case 'run_cancelled':
      title = 'Run cancelled';
      break;
  }
  return element('li', { 'data-event-type': event.type, 'data-seq': String(event.seq) }, [
    element('span', { class: 'type' }, [title]),
    ' ',
    element('time', { datetime: event.at, class: 'muted' }, [timeOf(event.at)]),
    ...details,
  ]);
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

/**
 * The form that decides one pending call: its input as editable JSON, checked against the tool's schema by the
 * server (the run's own validator) as it is typed, so issues show at their paths before anything is sent.
 * @param {string} runId
 * @param {PendingApproval} approval
 * @param {unknown} schema
 * @param {(outcome: string) => void} onDecided told the outcome once the run took the decision; the form goes away
 */
function decisionForm(runId, approval, schema, onDecided) {
  const id = `call-${approval.toolCallId.replace(/[^\w-]/g, '_')}`;
  const original = prettyJson(approval.input);
  // A call that needs several approvals runs the input every approver saw: nobody edits it.
  const several = approval.approvalsRequired;
  /** @type {Record<string, string>} */
  const fixed = several === undefined ? {} : { readonly: '' };
  const input = /** @type {HTMLTextAreaElement} */ (
    element('textarea', { id: `${id}-input`, 'aria-describedby': `${id}-issues`, spellcheck: 'false', ...fixed }, [
      original,
    ])
  );
  const issues = element('ul', { id: `${id}-issues`, class: 'issues', 'aria-live': 'polite' });
  // The longest reason the run keeps, as the page was given it: the server refuses a longer one.
  const maxReasonLength = document.querySelector('[data-max-reason-length]')?.getAttribute('data-max-reason-length');
  /** @type {Record<string, string>} */
  const reasonAttributes = { id: `${id}-reason`, autocomplete: 'off' };
  if (maxReasonLength) reasonAttributes['maxlength'] = maxReasonLength;
  const reason = /** @type {HTMLInputElement} */ (element('input', reasonAttributes));
  // Not a submit button: Enter in the reason field, typed to reject, must never approve (see the form's submit).
  const approve = /** @type {HTMLButtonElement} */ (element('button', { type: 'button' }, ['Approve']));
  const reject = /** @type {HTMLButtonElement} */ (element('button', { type: 'button', class: 'danger' }, ['Reject']));
  const result = element('p', { role: 'status', tabindex: '-1', class: 'result' });
  const barred = whyNotYours(approval);
  approve.disabled = barred !== undefined;
  reject.disabled = barred !== undefined && barred.mayReject !== true;
  const form = element(
    'form',
    { class: 'approval', 'aria-labelledby': `${id}-title`, 'data-tool-call-id': approval.toolCallId },
    [
      element('h3', { id: `${id}-title` }, [`${approval.toolName} (call ${approval.toolCallId})`]),
      element('p', { class: 'muted' }, [
        `Requested ${timeOf(approval.requestedAt)}, expires ${timeOf(approval.expiresAt)}.`,
        ...(approval.approvers ? [` Only ${approval.approvers.join(' or ')} may decide it.`] : []),
        ...(several === undefined ? [] : [` ${approvalsSoFar(several, approval.approvals ?? [])}`]),
      ]),
      element('label', { for: input.id }, [
        several === undefined
          ? 'Input (JSON; edit it to approve different arguments)'
          : `Input (JSON; it runs as proposed once ${several} approvers approve it)`,
      ]),
      input,
      issues,
      ...(schema === undefined
        ? []
        : [
            element('details', {}, [
              element('summary', {}, ['Tool input schema']),
              element('pre', {}, [prettyJson(schema)]),
            ]),
          ]),
      element('label', { for: reason.id }, ['Reason (required to reject)']),
      reason,
      ...(barred ? [element('p', { class: 'muted', 'data-barred': '' }, [barred.text])] : []),
      approve,
      reject,
      result,
    ],
  );

  /** @returns {Promise<{ valid: boolean, value?: unknown }>} */
  async function check() {
    let value;
    try {
      value = JSON.parse(input.value);
    } catch (error) {
      showIssues([{ path: '', message: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` }]);
      return { valid: false };
    }
    const answer = await post(`${runPath(runId)}/check`, { toolCallId: approval.toolCallId, input: value });
    if (!answer.ok) {
      showIssues([{ path: '', message: answer.data.detail ?? `Could not check the input (${answer.status})` }]);
      return { valid: false };
    }
    showIssues(answer.data.issues);
    return { valid: answer.data.valid, value };
  }

  /** @param {Issue[]} found */
  function showIssues(found) {
    issues.replaceChildren(
      ...found.map((issue) => element('li', {}, [`${issue.path || '(input)'}: ${issue.message}`])),
    );
    input.setAttribute('aria-invalid', found.length > 0 ? 'true' : 'false');
    approve.disabled = found.length > 0 || barred !== undefined;
  }

  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let pendingCheck;
  input.addEventListener('input', () => {
    clearTimeout(pendingCheck);
    pendingCheck = setTimeout(() => void check(), 250);
  });

  /** @param {'approve' | 'reject'} decision @param {Record<string, unknown>} body */
  async function send(decision, body) {
    approve.disabled = reject.disabled = true;
    const answer = await post(`${runPath(runId)}/${decision}`, { toolCallId: approval.toolCallId, ...body });
    if (answer.ok) {
      onDecided(decision === 'approve' ? approvedText(answer.data) : 'Rejected.');
      return;
    }
    if (Array.isArray(answer.data.issues)) showIssues(answer.data.issues);
    result.textContent = answer.data.detail ?? `The decision was refused (${answer.status}).`;
    approve.disabled = barred !== undefined;
    reject.disabled = barred !== undefined && barred.mayReject !== true;
    result.focus();
  }

  // Enter in the reason field submits the form: it decides nothing, and says how to.
  form.addEventListener('submit', (submitted) => {
    submitted.preventDefault();
    result.textContent = 'Enter does not decide: press Approve or Reject.';
  });
  approve.addEventListener('click', async () => {
    clearTimeout(pendingCheck);
    const checked = await check();
    if (!checked.valid) {
      input.focus();
      return;
    }
    const edited = JSON.stringify(checked.value) !== JSON.stringify(approval.input);
    await send('approve', {
      ...(edited ? { input: checked.value } : {}),
      ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
    });
  });
  reject.addEventListener('click', async () => {
    if (!reason.value.trim()) {
      reason.setAttribute('aria-invalid', 'true');
      result.textContent = 'Give a reason to reject.';
      reason.focus();
      return;
    }
    reason.removeAttribute('aria-invalid');
    await send('reject', { reason: reason.value.trim() });
  });
  return form;
}

const approvalsList = document.querySelector('[data-inbox="approvals"]');
if (approvalsList instanceof HTMLElement) startApprovalsList(approvalsList);
const runRoot = document.querySelector('[data-inbox="run"]');
if (runRoot instanceof HTMLElement) startRunPage(runRoot);
