/** Import-direction rules of the architecture (docs/code-layout.md). `npm run lint` enforces them. */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-nothing',
      comment: 'domain/ holds canonical models and imports nothing of ours',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'providers-stay-pure',
      comment:
        'adapters import only domain, protocols and providers/shared; keys, URLs and the HTTP client are passed in',
      severity: 'error',
      from: { path: '^src/providers/' },
      to: { path: '^src/', pathNot: '^src/(domain|protocols|providers)/' },
    },
    {
      name: 'protocols-describe-wire-formats-only',
      comment:
        'protocols/ holds each wire protocol described once (TypeBox schemas and maps): it imports only domain and TypeBox',
      severity: 'error',
      from: { path: '^src/protocols/' },
      to: { path: '^src/|node_modules/', pathNot: '^src/(domain|protocols)/|node_modules/typebox/' },
    },
    {
      name: 'providers-no-framework',
      severity: 'error',
      from: { path: '^src/providers/' },
      to: { path: 'node_modules/(fastify|@fastify|drizzle-orm|pg|@electric-sql)/' },
    },
    {
      name: 'surfaces-never-call-adapters-or-storage',
      comment: 'surfaces call the gateway core, never an adapter, never SQL',
      severity: 'error',
      from: { path: '^src/surfaces/' },
      to: { path: '^src/(providers|storage)/' },
    },
    {
      name: 'surfaces-are-independent',
      severity: 'error',
      from: { path: '^src/surfaces/([^/]+)/' },
      to: { path: '^src/surfaces/', pathNot: '^src/surfaces/$1/' },
    },
    {
      name: 'sql-only-in-storage',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/storage/' },
      to: { path: 'node_modules/(drizzle-orm|pg|@electric-sql)/' },
    },
    {
      name: 'core-never-touches-http',
      comment: 'billing, catalog, identity, jobs and storage know nothing of HTTP or the surfaces',
      severity: 'error',
      from: { path: '^src/(billing|catalog|identity|jobs|storage|domain|config)/' },
      to: { path: '^src/(http|surfaces)/|node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'only-the-root-wires-http',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(main\\.ts|http/|cli/)' },
      to: { path: '^src/http/app\\.ts$' },
    },
    {
      name: 'http-knows-no-surface',
      comment: 'http/ is the toolkit surfaces stand on; the composition root registers the surfaces into the app',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/surfaces/' },
    },
    {
      name: 'gateway-never-touches-http',
      comment: 'the pipeline takes a request context, never a Fastify request: surfaces decode, call it, and encode',
      severity: 'error',
      from: { path: '^src/gateway/' },
      to: { path: '^src/(http|surfaces|streaming)/|node_modules/(fastify|@fastify)/' },
    },
    {
      name: 'telemetry-reads-records',
      comment:
        'telemetry reads the usage record once it is announced and the events it is told; it reaches into no pipeline, ledger or storage',
      severity: 'error',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/(gateway|billing|storage|jobs|identity|catalog|providers|surfaces|http|media)/' },
    },
    {
      name: 'media-is-facts',
      comment: 'media/ reads facts of files and fetches URLs: it imports only domain',
      severity: 'error',
      from: { path: '^src/media/' },
      to: { path: '^src/', pathNot: '^src/(domain|media)/' },
    },
    {
      name: 'storage-below-billing',
      comment:
        'storage keeps rows and runs SQL; money rules live above it in billing, and nothing above billing is known to it',
      severity: 'error',
      from: { path: '^src/storage/' },
      to: { path: '^src/(billing|gateway|jobs|identity|catalog|surfaces|http|telemetry|providers|media)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
