// The platforms the VSIX is built for: VS Code's target names and the better-sqlite3 prebuild each
// one carries (node_modules/better-sqlite3/prebuilds/<prebuild>.node, which
// src/core/store/sqlite/sqlite.ts loads at run time by the same names). better-sqlite3 has no
// linux-armhf build, so there is no linux-armhf VSIX; the universal one carries all eight.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface VsixTarget {
  /** VS Code's name, as `vsce package --target` and the manifest's TargetPlatform take it. */
  target: string;
  /** better-sqlite3's name for the same platform. */
  prebuild: string;
}

export const VSIX_TARGETS: readonly VsixTarget[] = [
  { target: 'linux-x64', prebuild: 'linux-x64' },
  { target: 'linux-arm64', prebuild: 'linux-arm64' },
  { target: 'alpine-x64', prebuild: 'linuxmusl-x64' },
  { target: 'alpine-arm64', prebuild: 'linuxmusl-arm64' },
  { target: 'darwin-x64', prebuild: 'darwin-x64' },
  { target: 'darwin-arm64', prebuild: 'darwin-arm64' },
  { target: 'win32-x64', prebuild: 'win32-x64' },
  { target: 'win32-arm64', prebuild: 'win32-arm64' },
];

/** The universal package, beside package.json: what the README and the tests install. */
export const UNIVERSAL_VSIX = 'springfield.vsix';
/** The platform packages' folder, beside the universal one. */
export const PLATFORM_DIR = 'dist-vsix';
/** Where the prebuilds are, in the repository and in a VSIX (under `extension/`). */
export const PREBUILDS_DIR = 'node_modules/better-sqlite3/prebuilds';

/** A platform package's path, under the folder the universal one is in. */
export function platformVsix(outDir: string, target: string): string {
  return join(outDir, PLATFORM_DIR, `springfield-${target}.vsix`);
}

/** The target of the machine this runs on (musl Linux is alpine), if the VSIX is built for it. */
export function hostTarget(): string | undefined {
  const arch = process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
  const os = process.platform === 'linux' && existsSync(`/lib/ld-musl-${arch}.so.1`) ? 'alpine' : process.platform;
  return VSIX_TARGETS.find((t) => t.target === `${os}-${process.arch}`)?.target;
}
