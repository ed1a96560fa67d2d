// Preloaded (`--import`, through NODE_OPTIONS) into processes that tests start as a user would: when such a process
// exits it writes MODULE_PROBE_DIR/<pid>.json with its Node version, argv and execArgv, and every module URL it
// resolved. Plain JavaScript, because npm itself may run on a Node that neither strips types nor has
// module.registerHooks (there the URLs are left out: `urls` is null).
import { writeFileSync } from 'node:fs';
import module from 'node:module';
import path from 'node:path';

const directory = process.env.MODULE_PROBE_DIR;
if (directory) {
  const urls = typeof module.registerHooks === 'function' ? new Set() : null;
  module.registerHooks?.({
    resolve(specifier, context, nextResolve) {
      const result = nextResolve(specifier, context);
      urls.add(result.url);
      return result;
    },
  });
  process.on('exit', () => {
    const record = {
      version: process.version,
      argv: process.argv,
      execArgv: process.execArgv,
      urls: urls && [...urls],
      compileCacheDir: module.getCompileCacheDir?.() ?? null,
    };
    writeFileSync(path.join(directory, `${process.pid}.json`), JSON.stringify(record));
  });
}
