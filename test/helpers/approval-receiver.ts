import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyApprovalNotice } from '../../src/notify/approval-webhook.js';
import type { ApprovalNotice } from '../../src/shared/approval-notice.js';

/** A webhook receiver on a local port that checks each notice's signature, for the approval-notice tests. */
export interface ApprovalReceiver {
  /** Where to post: `http://127.0.0.1:<port>/approvals`. */
  url: string;
  /** The notices it answered 200 for, in the order it answered them. */
  notices: ApprovalNotice[];
  /** Statuses to answer, queued by `<toolCallId>/<notice type>` (200 when none is left). */
  answers: Map<string, number[]>;
  /** How long to take before answering (ms), queued the same way (no wait when none is left). */
  delays: Map<string, number[]>;
  /** The notices of one run, in the order they were taken. */
  noticesOf(runId: string): ApprovalNotice[];
  /** Polls until the run has `count` notices, 20 s at most. */
  waitForNotices(runId: string, count: number): Promise<ApprovalNotice[]>;
  close(): Promise<void>;
}

export async function startApprovalReceiver(secret: string): Promise<ApprovalReceiver> {
  const answers = new Map<string, number[]>();
  const delays = new Map<string, number[]>();
  const notices: ApprovalNotice[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const signature = request.headers['relay-e-signature'] as string | undefined;
      const notice = verifyApprovalNotice({ body, signature, secret });
      const key = `${notice.toolCallId}/${notice.type}`;
      const status = answers.get(key)?.shift() ?? 200;
      setTimeout(
        () => {
          if (status === 200) notices.push(notice);
          response.writeHead(status).end();
        },
        delays.get(key)?.shift() ?? 0,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const noticesOf = (runId: string) => notices.filter((notice) => notice.runId === runId);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/approvals`,
    notices,
    answers,
    delays,
    noticesOf,
    async waitForNotices(runId, count) {
      const deadline = Date.now() + 20_000;
      while (noticesOf(runId).length < count) {
        if (Date.now() > deadline) throw new Error(`Only ${noticesOf(runId).length} of ${count} notices after 20 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return noticesOf(runId);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
