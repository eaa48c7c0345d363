import { CHROMIUM, locate } from '../../infra/system-packages.ts';

/** Chromium from CHROMIUM_PATH or the PATH; a clear failure (never a skip) without one. */
export function chromiumExecutable(): string {
  const found = locate(CHROMIUM);
  if (found) return found;
  throw new Error(
    "no Chromium on the PATH (or CHROMIUM_PATH): npm test installs Debian's `chromium` as root; otherwise `sudo apt-get install -y --no-install-recommends chromium`",
  );
}
