import type { ModelCall, ModelProvider } from '../model/model-provider.js';
import type { ToolResult } from '../shared/tool-result.js';
import type { ProposedToolCall, TranscriptMessage } from '../shared/transcript.js';
import { scriptedModel } from '../testing/scripted-model.js';
import type { ScriptedTurn } from '../testing/scripted-model.js';
import { demoMerchants, formatUsd } from './demo-bank.js';
import type { DemoAccount, TransactionSearchResult, TransferReceipt } from './demo-bank.js';

/** The model id of the scripted demo model. */
export const demoModelId = 'scripted:demo';

/** Every answer of the demo model starts with this, so nobody mistakes it for an LLM. */
const demoAnswerPrefix = '[scripted demo model]';

const help =
  `${demoAnswerPrefix} I only understand a few requests. Try "balance of ACC-1", ` +
  '"transactions at Amazon over 100" or "transfer 50 from ACC-1 to ACC-2".';

/** The scripted demo model as a provider; register it as `scripted` and call it as `scripted:demo`. */
export function createDemoModel(): ModelProvider {
  return scriptedModel(decideDemoTurn);
}

/**
 * Picks the demo model's next turn from the transcript: tool calls for a recognised request, then an answer
 * written from the tool results (so an edited or rejected call is reported as it really went).
 */
function decideDemoTurn(request: ModelCall): ScriptedTurn {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: answerFromResults(trailingToolResults(request.messages)) };
  const prompt = lastUserText(request.messages);
  const toolCalls = proposeToolCalls(prompt);
  return toolCalls === undefined ? { text: help } : { toolCalls };
}

function proposeToolCalls(prompt: string): ProposedToolCall[] | undefined {
  const accounts = [...new Set([...prompt.matchAll(/\bACC-\d+\b/gi)].map((match) => match[0].toUpperCase()))];
  if (/\btransfer\b|\bsend\b|\bmove\b/i.test(prompt)) {
    const amount = /\$?(\d+(?:\.\d{1,2})?)/.exec(prompt.replace(/\bACC-\d+\b/gi, ''));
    const [from, to] = accounts;
    if (!amount?.[1] || from === undefined || to === undefined) return undefined;
    return [{ name: 'transfer_funds', input: { from_account: from, to_account: to, amount_usd: Number(amount[1]) } }];
  }
  if (/\bbalance/i.test(prompt)) {
    return (accounts.length > 0 ? accounts : ['ACC-1']).map((account) => ({
      name: 'get_balance',
      input: { account_id: account },
    }));
  }
  if (/\btransactions?\b|\bspen[dt]\b|\bpurchases?\b/i.test(prompt)) {
    const merchant = demoMerchants.find(({ merchant: name }) => prompt.toLowerCase().includes(name.toLowerCase()));
    const over = /\b(?:over|above|more than)\s+\$?(\d+(?:\.\d+)?)/i.exec(prompt)?.[1];
    const under = /\b(?:under|below|less than)\s+\$?(\d+(?:\.\d+)?)/i.exec(prompt)?.[1];
    return [
      {
        name: 'search_transactions',
        input: {
          ...(accounts[0] !== undefined ? { account_id: accounts[0] } : {}),
          ...(merchant ? { merchant: merchant.merchant } : {}),
          ...(over !== undefined ? { min_amount_usd: Number(over) } : {}),
          ...(under !== undefined ? { max_amount_usd: Number(under) } : {}),
        },
      },
    ];
  }
  return undefined;
}

function answerFromResults(results: readonly ToolResult[]): string {
  return [demoAnswerPrefix, ...results.map(describeResult)].join(' ');
}

function describeResult(result: ToolResult): string {
  if (!result.success) {
    if (result.errorType === 'rejected')
      return `The ${result.toolName} call was rejected, so nothing was done (${result.error}).`;
    if (result.errorType === 'approval_timeout')
      return `Nobody approved ${result.toolName} in time, so nothing was done.`;
    return `${result.toolName} failed: ${result.error}`;
  }
  switch (result.toolName) {
    case 'get_balance': {
      const account = result.data as DemoAccount;
      return `${account.account_id} (${account.name}) has ${formatUsd(account.balance_usd)}.`;
    }
    case 'search_transactions': {
      const { matches, total_count: total, truncated } = result.data as TransactionSearchResult;
      const newest = matches
        .slice(0, 5)
        .map((match) => `${match.date} ${match.merchant} ${formatUsd(match.amount_usd)}`)
        .join('; ');
      const shown = truncated ? ` (the tool returned the newest ${matches.length})` : '';
      return total === 0 ? 'No transactions match.' : `${total} transactions match${shown}. Newest: ${newest}.`;
    }
    case 'transfer_funds': {
      const receipt = result.data as TransferReceipt;
      return (
        `Transferred ${formatUsd(receipt.amount_usd)} from ${receipt.from_account} to ${receipt.to_account} ` +
        `(${receipt.transfer_id}). New balances: ${receipt.from_account} ${formatUsd(receipt.from_balance_usd)}, ` +
        `${receipt.to_account} ${formatUsd(receipt.to_balance_usd)}.`
      );
    }
    default:
      return `${result.toolName} returned ${JSON.stringify(result.data)}.`;
  }
}

function trailingToolResults(messages: readonly TranscriptMessage[]): ToolResult[] {
  const results: ToolResult[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== 'tool') break;
    results.unshift(message.result);
  }
  return results;
}

function lastUserText(messages: readonly TranscriptMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role === 'user') return message.content;
  }
  return '';
}
