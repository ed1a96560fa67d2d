import { defineConfig } from 'vite';

/** The dashboard: a Preact single-page app the gateway serves at `/` from web/dist (see src/http/dashboard.ts). */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    // Each build is tested in a real browser; a source map would only grow what is shipped.
    sourcemap: false,
  },
  // `vite dev` forwards the API to a gateway started with `npm start`.
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
