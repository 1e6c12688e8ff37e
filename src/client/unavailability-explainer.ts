import type { RelayError } from '../shared/errors.js';
import { explainUnavailable } from './workflow-task-failure.js';
import type { WorkflowTaskFailure } from './workflow-task-failure.js';

/**
 * Says why a followed run cannot answer once each stretch without an answer ({@link explainUnavailable}, one history
 * read), and drops an explanation that comes after the run answered again: what `relay-e run` and the API's poller
 * tell their followers.
 */
export class UnavailabilityExplainer {
  /** Counts the times the run answered again, so a read begun in an earlier stretch is not told. */
  private stretch = 0;
  private askedIn: number | undefined;
  private told: RelayError | undefined;

  constructor(
    private readonly runId: string,
    private readonly readFailure: () => Promise<WorkflowTaskFailure | undefined>,
    private readonly tell: (explained: RelayError) => void,
  ) {}

  /** Why the run cannot answer, once told in the current stretch. */
  get current(): RelayError | undefined {
    return this.told;
  }

  /** The run could not answer: the first time in a stretch, reads why and tells it. */
  unavailable(error: RelayError): void {
    if (this.askedIn === this.stretch) return;
    const asked = (this.askedIn = this.stretch);
    void explainUnavailable(error, this.runId, this.readFailure).then((explained) => {
      if (asked !== this.stretch) return;
      this.told = explained;
      this.tell(explained);
    });
  }

  /** The run answered: a new stretch begins. Whether the one that ended was told. */
  answered(): boolean {
    this.stretch += 1;
    const wasTold = this.told !== undefined;
    this.told = undefined;
    return wasTold;
  }
}
