/**
 * The dependency rule between the folders of src/ (docs/architecture.md, "Dependency rule"),
 * checked by `npm run check` (`npm run deps:check`):
 *
 *   routes → services → repositories → db
 *
 * `engine/`, `integrations/`, `auth/`, `access/` and `db/` import nothing of the APIs (`platform/`, `scanner/`,
 * `http/`); `platform/` (API v0) and `scanner/` (API v1) do not import each other, and the
 * organization state both use (`organization/`: credits, integrations, service keys, workspaces) imports
 * neither; there are no import cycles. Test files are not checked.
 *
 * KNOWN_EXCEPTIONS lists the imports that break a rule today, each with the reason. A listed
 * import passes; any other import breaking the rule fails, including a new import from a listed
 * file. Remove an entry when its import goes.
 */

const API = '^src/(platform|scanner|http|organization)/';

/** Anchored regular expression of one file path. */
const file = (path) => `^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

/** rule name → importing file → the files it may still import against the rule. */
const KNOWN_EXCEPTIONS = {
  'scanner-not-platform': {
    // Publishing a draft files a v0 finding through the one creation path, so that a published
    // draft is a finding like any other (numbering, related files, events).
    'src/scanner/drafts/drafts.publish.ts': ['src/platform/findings/findings.service.ts'],
    // The drafts listing and the scan list page with the signed cursors both APIs use.
    'src/scanner/drafts/drafts.service.ts': ['src/platform/pagination/cursor.ts'],
    'src/scanner/scans/scans.reads.ts': ['src/platform/pagination/cursor.ts'],
    'src/scanner/scans/scans.deps.ts': ['src/platform/pagination/cursor.ts'],
    // The scan list's cursor key: created_at as microsecond text, the format the cursors check.
    'src/scanner/scans/scans.repo.ts': ['src/platform/pagination/list-params.ts'],
    // The workspace listing pages with the same cursors.
    'src/scanner/workspaces/workspaces.service.ts': ['src/platform/pagination/cursor.ts'],
  },
  'organization-no-api': {
    // The workspace listing's cursor key: created_at as microsecond text, the format the cursors check.
    'src/organization/workspaces/workspaces.repo.ts': ['src/platform/pagination/list-params.ts'],
  },
};

const RULES = [
  {
    name: 'no-circular',
    comment: 'No import cycles.',
    from: {},
    to: { circular: true },
  },
  {
    name: 'engine-integrations-no-api',
    comment: 'The engine and the outbound adapters import nothing of the APIs.',
    from: { path: '^src/(engine|integrations)/' },
    to: { path: API },
  },
  {
    name: 'infrastructure-no-api',
    comment:
      'Credentials, the access policy, the database and the shared leaf modules import nothing of the APIs.',
    from: { path: ['^src/(auth|access|db)/', '^src/(errors|config|strings|rate-limit|json)\\.ts$'] },
    to: { path: API },
  },
  {
    name: 'db-not-upwards',
    comment: 'The database layer imports nothing above it.',
    from: { path: '^src/db/' },
    to: { path: '^src/(platform|scanner|organization|http|jobs|cli|auth|access)/' },
  },
  {
    name: 'db-formats-types-only',
    comment:
      'The database layer imports only types of the engine and of the outbound adapters: the formats of what it stores (threat model, scan report, integration settings).',
    from: { path: '^src/db/' },
    to: { path: '^src/(engine|integrations)/', dependencyTypesNot: ['type-only'] },
  },
  {
    name: 'service-no-sql',
    comment: 'Services ask repositories: no drizzle-orm and no db/schema import in a *.service.ts.',
    from: { path: '\\.service\\.ts$' },
    to: { path: ['^src/db/schema/', '(^|/)node_modules/drizzle-orm/'] },
  },
  {
    name: 'service-no-http',
    comment: 'Services know nothing of routes or of the HTTP layer.',
    from: { path: '\\.service\\.ts$' },
    to: { path: ['\\.routes\\.ts$', '^src/http/'] },
  },
  {
    name: 'repo-not-upwards',
    comment: 'Repositories call neither services nor routes nor the HTTP layer.',
    from: { path: '\\.repo\\.ts$' },
    to: { path: ['\\.(service|routes)\\.ts$', '^src/http/'] },
  },
  {
    name: 'routes-no-sql',
    comment: 'Routes call services; they reach neither repositories nor the database.',
    from: { path: '\\.routes\\.ts$' },
    to: { path: ['\\.repo\\.ts$', '^src/db/', '(^|/)node_modules/drizzle-orm/'] },
  },
  {
    name: 'organization-no-api',
    comment:
      'Organization state both APIs use (credits, integrations, service keys, workspaces) imports neither API.',
    from: { path: '^src/organization/' },
    to: { path: '^src/(platform|scanner)/' },
  },
  {
    name: 'platform-not-scanner',
    comment: 'API v0 does not import API v1.',
    from: { path: '^src/platform/' },
    to: { path: '^src/scanner/' },
  },
  {
    name: 'scanner-not-platform',
    comment: 'API v1 does not import API v0.',
    from: { path: '^src/scanner/' },
    to: { path: '^src/platform/' },
  },
];

const asList = (value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/**
 * A rule with its known exceptions: the rule itself for every other file, and for each listed
 * file the same rule minus the imports listed for it.
 */
function withExceptions(rule) {
  const known = KNOWN_EXCEPTIONS[rule.name] ?? {};
  const files = Object.keys(known);
  const base = {
    ...rule,
    severity: 'error',
    from: { ...rule.from, pathNot: [...asList(rule.from.pathNot), ...files.map(file)] },
  };
  return [
    base,
    ...files.map((from) => ({
      ...rule,
      name: rule.name,
      comment: `${rule.comment} (known exceptions of ${from} excepted)`,
      severity: 'error',
      from: { path: file(from) },
      to: { ...rule.to, pathNot: [...asList(rule.to.pathNot), ...known[from].map(file)] },
    })),
  ];
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: RULES.flatMap(withExceptions),
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.test\\.ts$', '^src/sdk/schema\\.d\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
