/** Import-direction rules of the architecture (docs: README, "Code layout"). `npm run lint` enforces them. */
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
