import { describe, expect, it } from 'vitest';
import { portInUse } from '../../../src/dev/temporal-dev-server.js';

describe('portInUse', () => {
  it("reads the port from the CLI's own check of a port it was given", () => {
    const log =
      'time=2026-12-04T03:23:31.839 level=ERROR msg="can\'t set UI port 47111: listen tcp 127.0.0.1:47111: ' +
      'bind: address already in use"';
    expect(portInUse(log)).toBe(47111);
  });

  it('reads the port from a bind that failed inside the server, IPv6 included', () => {
    expect(portInUse('Unable to start server. Error: listen tcp [::1]:7234: bind: address already in use')).toBe(7234);
  });

  it('names no port when the log names none', () => {
    expect(portInUse('address already in use')).toBeUndefined();
  });
});
