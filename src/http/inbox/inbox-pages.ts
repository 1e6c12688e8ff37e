import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { maxDecisionReasonLength } from '../../shared/run-types.js';
import { approverOf } from './inbox-sessions.js';
import type { InboxSession } from './inbox-sessions.js';

type Page = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The frame every inbox page shares: one stylesheet and one script, both served by the API itself. */
function layout(title: string, body: Page, session?: InboxSession): Page {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${session ? html`<meta name="relay-csrf" content="${session.csrfToken}" />` : ''}
        ${session ? html`<meta name="relay-approver" content="${approverOf(session)}" />` : ''}
        <title>${title} · Relay-E inbox</title>
        <link rel="stylesheet" href="/inbox/assets/inbox.css" />
        <script type="module" src="/inbox/assets/inbox.js"></script>
      </head>
      <body>
        <header class="bar">
          <a class="brand" href="/">Relay-E approvals</a>
          ${
            session
              ? html`<span class="who"
                    >Signed in as <strong>${approverOf(session)}</strong>, tenant
                    <strong>${session.tenant.tenantId}</strong></span
                  >
                  <form method="post" action="/inbox/session/end">
                    <button type="submit" class="quiet">Sign out</button>
                  </form>`
              : ''
          }
        </header>
        <main id="main" tabindex="-1">${body}</main>
      </body>
    </html>`;
}

/**
 * The sign-in form; the key is posted once and never written into any page. `next` is the inbox page to go back to
 * once signed in (already checked to be one of the inbox's own paths).
 */
export function signInPage({ error, next }: { error?: string; next?: string | undefined } = {}): Page {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
      <p>Use an API key of your tenant. The inbox keeps a session cookie, not the key.</p>
      <form method="post" action="/inbox/session" class="card sign-in">
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="apiKey"
          type="password"
          autocomplete="off"
          required
          autofocus
          ${error ? html`aria-invalid="true" aria-describedby="sign-in-error"` : ''}
        />
        ${error ? html`<p id="sign-in-error" class="error" role="alert">${error}</p>` : ''}
        ${next === undefined ? '' : html`<input type="hidden" name="next" value="${next}" />`}
        <button type="submit">Sign in</button>
      </form>`,
  );
}

/** The tenant's pending approvals; the script fills the list and keeps it live. */
export function inboxPage(session: InboxSession): Page {
  return layout(
    'Pending approvals',
    html`<h1>Pending approvals</h1>
      <p id="approvals-status" role="status" aria-live="polite">Loading…</p>
      <ul id="approvals" class="approvals" data-inbox="approvals"></ul>
      <section aria-labelledby="open-run-heading" class="card">
        <h2 id="open-run-heading">Open a run</h2>
        <form id="open-run" method="get" action="/inbox/runs">
          <label for="run-id">Run id</label>
          <input id="run-id" name="id" required />
          <button type="submit">Open</button>
        </form>
      </section>
      <noscript><p class="error">The inbox needs JavaScript to list and decide approvals.</p></noscript>`,
    session,
  );
}

/** One run: its state, its pending calls with their decision forms, and its timeline, all filled by the script. */
export function runPage(session: InboxSession, runId: string): Page {
  return layout(
    `Run ${runId}`,
    html`<p><a href="/">← All pending approvals</a></p>
      <h1>Run <code>${runId}</code></h1>
      <div data-inbox="run" data-run-id="${runId}" data-max-reason-length="${maxDecisionReasonLength}">
        <p id="run-summary" role="status" aria-live="polite">Loading…</p>
        <section aria-labelledby="pending-heading">
          <h2 id="pending-heading">Waiting for a decision</h2>
          <div id="pending"></div>
        </section>
        <p>
          <button type="button" id="cancel-run" class="danger" hidden>Cancel this run</button>
          <button type="button" id="keep-run" class="quiet" hidden>Keep it running</button>
        </p>
        <section aria-labelledby="timeline-heading">
          <h2 id="timeline-heading">Timeline</h2>
          <ol id="timeline" class="timeline"></ol>
        </section>
      </div>`,
    session,
  );
}
