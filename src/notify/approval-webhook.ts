import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ApprovalNotice } from '../shared/approval-notice.js';
import { durationOptionMs } from '../shared/duration-option.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';
import type { DurationInput } from '../shared/run-types.js';
import { slackMessageOf } from './slack-message.js';

interface ApprovalWebhookBase {
  /** Receives each notice as a JSON `POST` (`http:` or `https:`). */
  url: string;
  /** The base address of the approvals inbox (`relay-e serve`), so each notice links to its call's page. */
  inboxUrl?: string;
  /**
   * How long one delivery may take before it counts as failed and is retried.
   * @default 10_000
   */
  timeoutMs?: number;
  /**
   * Reminds these approvers of a call still waiting this long before it expires (`'30m'`, or milliseconds), in place
   * of the worker's `remindApproversBeforeExpiry`: with a webhook per tenant, each tenant its own lead time. A tool's
   * own `remindApproversBeforeExpiryMs` still wins for its calls.
   * @default the worker's `remindApproversBeforeExpiry`
   */
  remindBeforeExpiry?: DurationInput;
}

/** A receiver of Relay-E's own notices (`ApprovalNotice` as JSON), signed with a secret it checks. */
export interface SignedApprovalWebhook extends ApprovalWebhookBase {
  /** @default 'relay-e' */
  format?: 'relay-e';
  /**
   * Signs every notice (HMAC-SHA256 in the `relay-e-signature` header), so the receiver can tell it came from
   * Relay-E ({@link verifyApprovalNotice}). At least 16 characters; never written to history.
   */
  secret: string;
}

/**
 * A Slack incoming webhook: each notice is posted as a Slack message (`{ text }`, see {@link slackMessageOf}). Its
 * URL is its own secret, so nothing is signed.
 */
export interface SlackApprovalWebhook extends ApprovalWebhookBase {
  format: 'slack';
}

/** Where a tenant's approvers are told of calls that wait for them: Relay-E's signed notices, or Slack messages. */
export type ApprovalWebhook = SignedApprovalWebhook | SlackApprovalWebhook;

/** One webhook for every tenant, or a webhook per tenant (undefined: that tenant's approvers are not notified). */
export type ApprovalWebhooks = ApprovalWebhook | ((tenantId: string) => ApprovalWebhook | undefined);

/** The header that carries a notice's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const approvalSignatureHeader = 'relay-e-signature';

/** The header that carries the notice's id, the same on every delivery of it. */
export const approvalDeliveryHeader = 'relay-e-delivery';

/** How old a signature {@link verifyApprovalNotice} accepts by default: older ones may be replays. */
const defaultToleranceSeconds = 300;

const minSecretLength = 16;

/** The webhook a tenant's notices go to, or undefined when its approvers are not notified. */
export function approvalWebhookFor(webhooks: ApprovalWebhooks, tenantId: string): ApprovalWebhook | undefined {
  const webhook = typeof webhooks === 'function' ? webhooks(tenantId) : webhooks;
  if (webhook !== undefined) checkApprovalWebhook(webhook);
  return webhook;
}

/**
 * `webhooks` with a link to the inbox at `inboxUrl()` wherever a webhook names no inbox of its own: `relay-e dev`
 * links notices to the inbox it serves, whose address is known only once it listens. A single webhook is checked
 * here, when the worker is made, as it would be unwrapped.
 */
export function linkedToInbox(webhooks: ApprovalWebhooks, inboxUrl: () => string | undefined): ApprovalWebhooks {
  if (typeof webhooks !== 'function') checkApprovalWebhook(webhooks);
  return (tenantId) => {
    const webhook = typeof webhooks === 'function' ? webhooks(tenantId) : webhooks;
    const link = inboxUrl();
    if (webhook === undefined || webhook.inboxUrl !== undefined || link === undefined) return webhook;
    return { ...webhook, inboxUrl: link };
  };
}

/**
 * How long before a waiting call expires its approvers are reminded, in milliseconds: a positive duration (`'1h'`,
 * or milliseconds), and only beside an approval webhook, which is what sends reminders. Undefined when not asked.
 */
export function approvalReminderMs(
  before: DurationInput | undefined,
  webhooks: ApprovalWebhooks | undefined,
): number | undefined {
  if (before === undefined) return undefined;
  const ms = reminderLeadMs(before);
  if (webhooks === undefined) {
    throw new RelayError('invalid_input', 'An approval reminder needs an approval webhook to send it');
  }
  return ms;
}

/** A reminder's lead time in milliseconds: a positive duration (`'1h'`, or milliseconds), else refused. */
function reminderLeadMs(before: DurationInput): number {
  const ms = durationOptionMs(before, 'Approval reminder', '1h');
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new RelayError('invalid_input', `Approval reminder '${String(before)}' must be a positive duration`);
  }
  return ms;
}

/**
 * The reminder lead time of the webhook a tenant's notices go to, when it sets one. A webhook that cannot be used
 * (refused by {@link checkApprovalWebhook}) sets none here: its notices fail, and each failure is recorded.
 */
export function tenantReminderMs(webhooks: ApprovalWebhooks, tenantId: string): number | undefined {
  try {
    const before = approvalWebhookFor(webhooks, tenantId)?.remindBeforeExpiry;
    return before === undefined ? undefined : reminderLeadMs(before);
  } catch {
    return undefined;
  }
}

/** Refuses a webhook that could never deliver or be trusted: a URL that is not http(s), an unknown format, a short secret. */
export function checkApprovalWebhook(webhook: ApprovalWebhook): void {
  let url: URL;
  try {
    url = new URL(webhook.url);
  } catch {
    // The URL itself is not echoed: a Slack webhook's URL is its secret, and this message can reach history.
    throw new RelayError('invalid_input', 'Approval webhook URL is not a URL');
  }
  const { protocol } = url;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new RelayError('invalid_input', `Approval webhook URL must be http: or https: (not ${protocol})`);
  }
  // fetch refuses such a URL and quotes it whole, password included, in an error that would reach history.
  if (url.username !== '' || url.password !== '') {
    throw new RelayError(
      'invalid_input',
      'Approval webhook URL must not carry a user name or password: receivers authenticate notices by their signature',
    );
  }
  const format: unknown = webhook.format ?? 'relay-e';
  if (format !== 'relay-e' && format !== 'slack') {
    throw new RelayError('invalid_input', `Approval webhook format '${String(format)}' is not 'relay-e' or 'slack'`);
  }
  const { secret } = webhook as { secret?: unknown };
  if (format === 'relay-e' && !(typeof secret === 'string' && secret.length >= minSecretLength)) {
    throw new RelayError('invalid_input', `Approval webhook secret must be at least ${minSecretLength} characters`);
  }
  if (webhook.inboxUrl !== undefined && !URL.canParse(webhook.inboxUrl)) {
    throw new RelayError('invalid_input', `Approval inbox URL '${webhook.inboxUrl}' is not a URL`);
  }
  if (webhook.remindBeforeExpiry !== undefined) reminderLeadMs(webhook.remindBeforeExpiry);
}

/**
 * The webhook `RELAY_E_APPROVAL_WEBHOOK_URL` names, for every tenant, with `RELAY_E_APPROVAL_WEBHOOK_SECRET` (Relay-E's
 * signed notices) or `RELAY_E_APPROVAL_WEBHOOK_FORMAT=slack` (a Slack incoming webhook, no secret), and
 * `RELAY_E_INBOX_URL` for links; undefined when none is set. A setting without the URL, or a signed webhook without
 * its secret, is refused, not ignored.
 */
export function approvalWebhookFromEnv(env: NodeJS.ProcessEnv): ApprovalWebhook | undefined {
  const url = env['RELAY_E_APPROVAL_WEBHOOK_URL'] || undefined;
  const secret = env['RELAY_E_APPROVAL_WEBHOOK_SECRET'] || undefined;
  const format = env['RELAY_E_APPROVAL_WEBHOOK_FORMAT'] || undefined;
  const tenants = env['RELAY_E_APPROVAL_WEBHOOK_TENANTS'] || undefined;
  if (url === undefined && secret === undefined && format === undefined && tenants === undefined) return undefined;
  if (url === undefined) {
    throw new RelayError('invalid_input', 'RELAY_E_APPROVAL_WEBHOOK_URL is not set: an approval webhook needs its URL');
  }
  const inboxUrl = env['RELAY_E_INBOX_URL'] || undefined;
  const links = inboxUrl ? { inboxUrl } : {};
  let webhook: ApprovalWebhook;
  if (format === 'slack') {
    webhook = { url, format, ...links };
  } else if (secret === undefined && (format === undefined || format === 'relay-e')) {
    throw new RelayError(
      'invalid_input',
      'RELAY_E_APPROVAL_WEBHOOK_SECRET is not set: a signed approval webhook needs both its URL and secret',
    );
  } else {
    // An unknown format is kept as given, for checkApprovalWebhook to refuse by name.
    webhook = { url, secret: secret ?? '', ...(format ? { format: format as 'relay-e' } : {}), ...links };
  }
  checkApprovalWebhook(webhook);
  return webhook;
}

/**
 * The tenants `RELAY_E_APPROVAL_WEBHOOK_TENANTS` (comma-separated) limits the environment's webhook to, or undefined
 * when it is unset: then the webhook serves every tenant. A list with no tenant in it is refused, not read as none.
 */
export function approvalWebhookTenantsFromEnv(env: NodeJS.ProcessEnv): string[] | undefined {
  const listed = env['RELAY_E_APPROVAL_WEBHOOK_TENANTS'] || undefined;
  if (listed === undefined) return undefined;
  const tenants = listed
    .split(',')
    .map((tenant) => tenant.trim())
    .filter((tenant) => tenant !== '');
  if (tenants.length === 0) {
    throw new RelayError('invalid_input', `RELAY_E_APPROVAL_WEBHOOK_TENANTS '${listed}' names no tenant`);
  }
  return tenants;
}

/** `webhook` for the listed tenants only: every other tenant's approvers are not notified. */
export function webhookForTenants(webhook: ApprovalWebhook, tenants: readonly string[]): ApprovalWebhooks {
  checkApprovalWebhook(webhook);
  const served = new Set(tenants);
  return (tenantId) => (served.has(tenantId) ? webhook : undefined);
}

/** The `relay-e-signature` header for `body` signed with `secret` at `at`. */
export function signApprovalNotice(body: string, secret: string, at: Date = new Date()): string {
  const timestamp = Math.floor(at.getTime() / 1_000);
  return `t=${timestamp},v1=${hmac(secret, `${timestamp}.${body}`)}`;
}

export interface VerifyApprovalNoticeOptions {
  /** The request body exactly as received (before any JSON parsing). */
  body: string;
  /** The `relay-e-signature` header. */
  signature: string | null | undefined;
  secret: string;
  /** @default 300 */
  toleranceSeconds?: number;
  /** @default now */
  now?: Date;
}

/**
 * The notice a webhook request carries, once its signature is checked: signed with `secret`, over this very body,
 * no older than `toleranceSeconds`. Throws `RelayError` `invalid_signature` otherwise; answer such a request 401. A
 * secret shorter than a worker accepts throws `invalid_input`: that is the receiver's set-up, not the request.
 */
export function verifyApprovalNotice(options: VerifyApprovalNoticeOptions): ApprovalNotice {
  const { body, signature, secret, toleranceSeconds = defaultToleranceSeconds, now = new Date() } = options;
  // A receiver whose secret went missing (an unset variable read as '') would accept notices anyone can sign.
  if (typeof secret !== 'string' || secret.length < minSecretLength) {
    throw new RelayError(
      'invalid_input',
      `The approval webhook secret to verify with must be at least ${minSecretLength} characters, as workers require`,
    );
  }
  const parts = new Map(
    (signature ?? '').split(',').map((part) => {
      const equals = part.indexOf('=');
      return [part.slice(0, equals).trim(), part.slice(equals + 1).trim()] as const;
    }),
  );
  const timestamp = Number(parts.get('t'));
  const given = parts.get('v1');
  if (!Number.isInteger(timestamp) || given === undefined) {
    throw new RelayError('invalid_signature', `The ${approvalSignatureHeader} header is missing or malformed`);
  }
  const expected = Buffer.from(hmac(secret, `${timestamp}.${body}`), 'hex');
  const actual = Buffer.from(given, 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new RelayError('invalid_signature', 'The notice is not signed with this secret, or its body was changed');
  }
  if (Math.abs(now.getTime() / 1_000 - timestamp) > toleranceSeconds) {
    throw new RelayError('invalid_signature', `The notice was signed more than ${toleranceSeconds} s from now`);
  }
  return JSON.parse(body) as ApprovalNotice;
}

/** Why a delivery failed, and whether trying again could help (no: the receiver refused the request itself). */
export class ApprovalDeliveryError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ApprovalDeliveryError';
  }
}

/**
 * Posts `notice` to `webhook`, signed (or as a Slack message); returns the receiver's status when it answers 2xx. Throws
 * {@link ApprovalDeliveryError}: permanent for a redirect (not followed) and a 4xx other than 408 and 429 (the request
 * itself is refused), transient for the rest (5xx, 408, 429, a timeout, a connection refused).
 */
export async function postApprovalNotice(webhook: ApprovalWebhook, notice: ApprovalNotice): Promise<number> {
  const body = JSON.stringify(webhook.format === 'slack' ? slackMessageOf(notice) : notice);
  const signature =
    webhook.format === 'slack' ? {} : { [approvalSignatureHeader]: signApprovalNotice(body, webhook.secret) };
  let response: Response;
  try {
    response = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signature, [approvalDeliveryHeader]: notice.id },
      body,
      // A signed notice goes where it was configured to go, never where a redirect points.
      redirect: 'manual',
      signal: AbortSignal.timeout(webhook.timeoutMs ?? 10_000),
    });
  } catch (error) {
    const cause = error instanceof Error ? (error.cause ?? error) : error;
    throw new ApprovalDeliveryError(`Approval webhook ${originOf(webhook)} unreachable: ${errorMessage(cause)}`, false);
  }
  // The body is not read: only the status says what happened, and an unread body would hold the connection.
  await response.body?.cancel();
  if (response.ok) return response.status;
  const permanent = response.status < 500 && ![408, 429].includes(response.status);
  throw new ApprovalDeliveryError(
    `Approval webhook ${originOf(webhook)} answered ${response.status}`,
    permanent,
    response.status,
  );
}

/**
 * The webhook as errors name it: its origin only. Errors are recorded in the run's history and events, and a webhook's
 * path or query can hold its credential (a Slack webhook's path is one).
 */
function originOf(webhook: ApprovalWebhook): string {
  return new URL(webhook.url).origin;
}

function hmac(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}
