import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeCliInvocation } from '../../../src/cli/cli-invocation.js';

const clone = path.join(path.sep, 'home', 'dana', 'relay-e');
const project = path.join(path.sep, 'home', 'dana', 'shop');
const installed = path.join(project, 'node_modules', '@relay-e', 'engine');

describe('the relay-e invocation printed in hints', () => {
  it('is `npm run relay-e --` anywhere inside a clone of the repository', () => {
    expect(describeCliInvocation({ packageRoot: clone, cwd: clone, isClone: true })).toBe('npm run relay-e --');
    expect(describeCliInvocation({ packageRoot: clone, cwd: path.join(clone, 'examples'), isClone: true })).toBe(
      'npm run relay-e --',
    );
  });

  it("is the clone's scripts/relay-e, relative to the user, outside the clone", () => {
    expect(describeCliInvocation({ packageRoot: clone, cwd: project, isClone: true })).toBe(
      '../relay-e/scripts/relay-e',
    );
  });

  it('is `npx relay-e` in a project (or one of its folders) that installed the package', () => {
    expect(describeCliInvocation({ packageRoot: installed, cwd: project, isClone: false })).toBe('npx relay-e');
    expect(describeCliInvocation({ packageRoot: installed, cwd: path.join(project, 'src'), isClone: false })).toBe(
      'npx relay-e',
    );
  });

  it('is plain `relay-e` for a global install used from elsewhere', () => {
    const global = path.join(path.sep, 'usr', 'lib', 'node_modules', '@relay-e', 'engine');
    expect(describeCliInvocation({ packageRoot: global, cwd: project, isClone: false })).toBe('relay-e');
    expect(describeCliInvocation({ packageRoot: installed, cwd: path.join(project + '-other'), isClone: false })).toBe(
      'relay-e',
    );
  });
});
