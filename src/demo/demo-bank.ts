import { RelayError } from '../shared/errors.js';

/** One account of the demo bank. */
export interface DemoAccount {
  account_id: string;
  name: string;
  owner: string;
  balance_usd: number;
}

/** One booked transaction; debits are negative. */
export interface DemoTransaction {
  transaction_id: string;
  account_id: string;
  date: string;
  merchant: string;
  category: string;
  amount_usd: number;
}

/** What `searchTransactions` filters on; every field is optional. */
export interface TransactionQuery {
  account_id?: string;
  merchant?: string;
  min_amount_usd?: number;
  max_amount_usd?: number;
}

/** A page of matches kept small for the model: the newest `limit`, the total and whether more exist. */
export interface TransactionSearchResult {
  matches: DemoTransaction[];
  total_count: number;
  truncated: boolean;
}

/** The receipt of a completed transfer, with both balances after it. */
export interface TransferReceipt {
  transfer_id: string;
  status: 'completed';
  from_account: string;
  to_account: string;
  amount_usd: number;
  from_balance_usd: number;
  to_balance_usd: number;
}

/** A transfer the bank has booked, under the idempotency key (or transfer id) it was booked with. */
export interface BookedTransfer {
  key: string;
  /** The booking day, `YYYY-MM-DD`. */
  date: string;
  receipt: TransferReceipt;
}

/** Everything a bank holds beyond its fixed seed: what {@link DemoBank.toState} writes and the constructor reads. */
export interface DemoBankState {
  version: 1;
  balancesCents: Record<string, number>;
  transfers: BookedTransfer[];
}

/** Merchants the generated transactions use, with the category each one books under. */
export const demoMerchants: ReadonlyArray<{ merchant: string; category: string }> = [
  { merchant: 'Amazon', category: 'shopping' },
  { merchant: 'Whole Foods', category: 'groceries' },
  { merchant: 'Starbucks', category: 'coffee' },
  { merchant: 'Uber', category: 'transport' },
  { merchant: 'Netflix', category: 'subscriptions' },
  { merchant: 'Shell', category: 'fuel' },
  { merchant: 'Apple', category: 'electronics' },
  { merchant: 'Delta Air Lines', category: 'travel' },
  { merchant: 'IKEA', category: 'home' },
  { merchant: 'CVS Pharmacy', category: 'health' },
];

const initialAccounts: readonly DemoAccount[] = [
  { account_id: 'ACC-1', name: 'Everyday Checking', owner: 'Dana Reyes', balance_usd: 4231.55 },
  { account_id: 'ACC-2', name: 'Savings', owner: 'Dana Reyes', balance_usd: 12500 },
  { account_id: 'ACC-3', name: 'Joint Checking', owner: 'Dana & Sam Reyes', balance_usd: 830.2 },
];

const generatedTransactions = 200;
const searchLimit = 20;
const seed = 20_240_601;
const firstDay = Date.UTC(2025, 0, 1);
const dayMs = 86_400_000;

/**
 * An in-memory bank for the demo: three accounts and 200 transactions generated from a fixed seed, plus the
 * balances and transfers of `state` when given (see DemoBankFile for a bank kept on disk).
 */
export class DemoBank {
  private readonly accounts = new Map<string, { account: DemoAccount; cents: number }>();
  private readonly transactions: DemoTransaction[];
  private readonly transfers = new Map<string, BookedTransfer>();

  constructor(state?: DemoBankState) {
    for (const account of initialAccounts) {
      const cents = state?.balancesCents[account.account_id] ?? Math.round(account.balance_usd * 100);
      this.accounts.set(account.account_id, { account, cents });
    }
    this.transactions = generateTransactions(initialAccounts.map((account) => account.account_id));
    for (const booked of state?.transfers ?? []) this.book(booked);
  }

  /** The balances and booked transfers, to be handed to the constructor later. */
  toState(): DemoBankState {
    return {
      version: 1,
      balancesCents: Object.fromEntries([...this.accounts].map(([id, { cents }]) => [id, cents])),
      transfers: [...this.transfers.values()],
    };
  }

  /** The account with its current balance; an unknown id throws. */
  getBalance(accountId: string): DemoAccount & { currency: 'USD' } {
    const { account, cents } = this.entry(accountId);
    return { ...account, balance_usd: cents / 100, currency: 'USD' };
  }

  /** Matches newest first, at most 20, with the total count and a truncated flag. */
  searchTransactions(query: TransactionQuery): TransactionSearchResult {
    if (query.account_id !== undefined) this.entry(query.account_id);
    const merchant = query.merchant?.toLowerCase();
    const all = this.transactions
      .filter(
        (transaction) =>
          (query.account_id === undefined || transaction.account_id === query.account_id) &&
          (merchant === undefined || transaction.merchant.toLowerCase().includes(merchant)) &&
          (query.min_amount_usd === undefined || Math.abs(transaction.amount_usd) >= query.min_amount_usd) &&
          (query.max_amount_usd === undefined || Math.abs(transaction.amount_usd) <= query.max_amount_usd),
      )
      .sort((a, b) => b.date.localeCompare(a.date) || b.transaction_id.localeCompare(a.transaction_id));
    return { matches: all.slice(0, searchLimit), total_count: all.length, truncated: all.length > searchLimit };
  }

  /**
   * Moves money between two accounts once per idempotency key: a retried call returns the first receipt
   * instead of moving the money again.
   */
  transfer(
    input: { from_account: string; to_account: string; amount_usd: number },
    idempotencyKey?: string,
  ): TransferReceipt {
    const earlier = idempotencyKey === undefined ? undefined : this.transfers.get(idempotencyKey);
    if (earlier) return earlier.receipt;
    if (input.from_account === input.to_account) {
      throw new RelayError('invalid_input', 'The source and destination accounts are the same');
    }
    const from = this.entry(input.from_account);
    const to = this.entry(input.to_account);
    const cents = Math.round(input.amount_usd * 100);
    if (cents > from.cents) {
      throw new RelayError(
        'invalid_input',
        `Insufficient funds: ${input.from_account} has ${formatUsd(from.cents / 100)}, the transfer needs ${formatUsd(cents / 100)}`,
      );
    }
    from.cents -= cents;
    to.cents += cents;
    const transferId = `xfer_${String(this.transfers.size + 1).padStart(4, '0')}`;
    const receipt: TransferReceipt = {
      transfer_id: transferId,
      status: 'completed',
      from_account: input.from_account,
      to_account: input.to_account,
      amount_usd: cents / 100,
      from_balance_usd: from.cents / 100,
      to_balance_usd: to.cents / 100,
    };
    this.book({ key: idempotencyKey ?? transferId, date: new Date().toISOString().slice(0, 10), receipt });
    return receipt;
  }

  /** Records a transfer whose balances are already applied, with its two transactions. */
  private book(booked: BookedTransfer): void {
    const { receipt, date } = booked;
    const cents = Math.round(receipt.amount_usd * 100);
    this.transactions.push(
      transferTransaction(
        `${receipt.transfer_id}-out`,
        receipt.from_account,
        date,
        `Transfer to ${receipt.to_account}`,
        -cents,
      ),
      transferTransaction(
        `${receipt.transfer_id}-in`,
        receipt.to_account,
        date,
        `Transfer from ${receipt.from_account}`,
        cents,
      ),
    );
    this.transfers.set(booked.key, booked);
  }

  private entry(accountId: string): { account: DemoAccount; cents: number } {
    const entry = this.accounts.get(accountId);
    if (!entry) {
      const known = [...this.accounts.keys()].join(', ');
      throw new RelayError('invalid_input', `Unknown account '${accountId}' (known accounts: ${known})`);
    }
    return entry;
  }
}

/** Formats an amount as US dollars with cents, e.g. `$4,231.55`. */
export function formatUsd(amount: number): string {
  return amount.toLocaleString('en-US', { style: 'currency', currency: 'USD' });
}

function transferTransaction(
  id: string,
  accountId: string,
  date: string,
  merchant: string,
  cents: number,
): DemoTransaction {
  return { transaction_id: id, account_id: accountId, date, merchant, category: 'transfer', amount_usd: cents / 100 };
}

function generateTransactions(accountIds: readonly string[]): DemoTransaction[] {
  const random = mulberry32(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  return Array.from({ length: generatedTransactions }, (_, index) => {
    const { merchant, category } = pick(demoMerchants);
    const cents = 150 + Math.floor(random() * random() * 40_000);
    return {
      transaction_id: `TX-${String(index + 1).padStart(4, '0')}`,
      account_id: pick(accountIds),
      date: new Date(firstDay + Math.floor((index * 180) / generatedTransactions) * dayMs).toISOString().slice(0, 10),
      merchant,
      category,
      amount_usd: -cents / 100,
    };
  });
}

/** A small seeded PRNG, so the generated data set is the same on every machine and every start. */
function mulberry32(state: number): () => number {
  let current = state;
  return () => {
    current = (current + 0x6d2b79f5) | 0;
    let t = Math.imul(current ^ (current >>> 15), 1 | current);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** How the demo tools reach a bank: read it, or change it and keep the change. */
export interface DemoBankAccess {
  read<T>(use: (bank: DemoBank) => T): Promise<T>;
  /** Runs `change` on the bank and keeps what it did; a change that throws keeps nothing. */
  update<T>(change: (bank: DemoBank) => T): Promise<T>;
}

/** One bank held in memory for the life of the process. */
export function inMemoryDemoBank(bank: DemoBank = new DemoBank()): DemoBankAccess {
  return { read: async (use) => use(bank), update: async (change) => change(bank) };
}
