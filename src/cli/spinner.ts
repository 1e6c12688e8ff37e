/** A one-line progress indicator on stderr that steps aside whenever something else is printed. */
export interface Spinner {
  /** Shows (or updates) the spinner with this text. */
  start(text: string): void;
  /** Removes the spinner line; `start` brings it back. */
  stop(): void;
  /** Prints a line to stdout without the spinner getting in the way. */
  print(line: string): void;
  /**
   * Shows a state the user must act on even without a terminal (`--json`, output piped): as the spinner's text, or
   * where it does not animate, once as a line on stderr, so stdout keeps only what the command prints.
   */
  notice(text: string): void;
}

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const frameIntervalMs = 80;

/** A spinner that animates only when `enabled` (a terminal, not `--json`); otherwise it just prints. */
export function createSpinner(enabled: boolean): Spinner {
  let timer: NodeJS.Timeout | undefined;
  let text = '';
  let frame = 0;
  let noticed: string | undefined;
  const clear = () => {
    if (timer !== undefined) process.stderr.write('\r\x1b[2K');
  };
  const draw = () => {
    process.stderr.write(`\r\x1b[2K${frames[frame % frames.length] ?? ''} ${text}`);
    frame++;
  };
  const start = (next: string) => {
    text = next;
    if (!enabled) return;
    if (timer === undefined) timer = setInterval(draw, frameIntervalMs);
    draw();
  };
  return {
    start,
    stop() {
      clear();
      clearInterval(timer);
      timer = undefined;
    },
    print(line) {
      clear();
      process.stdout.write(`${line}\n`);
      if (timer !== undefined) draw();
    },
    notice(next) {
      if (enabled) start(next);
      else if (next !== noticed) process.stderr.write(`${next}\n`);
      noticed = next;
    },
  };
}
