import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageName = '@relay-e/engine';

/** Where the running CLI's package sits, as {@link describeCliInvocation} needs it. */
export interface CliLocation {
  /** The folder of the package's package.json. */
  packageRoot: string;
  /** The user's working directory. */
  cwd: string;
  /** True in a clone of the repository (it has scripts/relay-e, which the published package does not ship). */
  isClone: boolean;
}

/**
 * The command a user types to run `relay-e` from where they are: `npm run relay-e --` inside a clone of this
 * repository (or the clone's scripts/relay-e from outside it), `npx relay-e` inside a project that installed the
 * package, and `relay-e` for a global install.
 */
export function describeCliInvocation(location: CliLocation): string {
  if (location.isClone) {
    return isInside(location.cwd, location.packageRoot)
      ? 'npm run relay-e --'
      : path.relative(location.cwd, path.join(location.packageRoot, 'scripts', 'relay-e'));
  }
  const segments = location.packageRoot.split(path.sep);
  const nodeModules = segments.lastIndexOf('node_modules');
  const project = nodeModules > 0 ? segments.slice(0, nodeModules).join(path.sep) : undefined;
  return project !== undefined && isInside(location.cwd, project) ? 'npx relay-e' : 'relay-e';
}

let invocation: string | undefined;

/** {@link describeCliInvocation} for this process, worked out once. */
export function cliInvocation(): string {
  invocation ??= describeCliInvocation(locateCli());
  return invocation;
}

function locateCli(): CliLocation {
  const packageRoot = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));
  return { packageRoot, cwd: process.cwd(), isClone: existsSync(path.join(packageRoot, 'scripts', 'relay-e')) };
}

/** The nearest folder upwards whose package.json is this package's (src/cli from source, dist/src/cli when built). */
function findPackageRoot(start: string): string {
  for (let folder = start; ; folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === packageName
    ) {
      return folder;
    }
    if (path.dirname(folder) === folder) return start;
  }
}

function isInside(folder: string, ancestor: string): boolean {
  const relative = path.relative(ancestor, folder);
  return !path.isAbsolute(relative) && relative.split(path.sep)[0] !== '..';
}
