// The server registers exactly the routes of @temp-inbox/api's table (docs/architecture.md
// "One API contract"): with every optional group on (mail.tm, sandboxes' Mailpit and MailHog,
// admin, metrics, MCP), each registered path is in the table and each path of the table is
// registered. The web build's own files are the only other routes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mounts, path, routes, within } from '@temp-inbox/api';
import { ADMIN_WEB_ROOT } from '../../src/http/routes/admin-page.js';
import { WEB_ROOT } from '../../src/http/routes/ui.js';
import { ADMIN_TOKEN } from '../helpers/admin.js';
import { startTestServer, type TestServer } from '../helpers/harness.js';

/** Every route of Fastify's printRoutes({ commonPrefix: false }) tree: a child's line holds the rest of its parent's path. */
function registered(tree: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const full = (stack[depth - 1] ?? '') + m[2]!;
    stack.push(full);
    if (m[3] !== undefined) found.set(full, m[3].split(', '));
  }
  return found;
}

/** A file of a web build that fastify-static serves as a route of its own (wildcard: false). */
function isBuiltFile(path: string): boolean {
  const file = (root: string, rest: string) => rest !== '' && existsSync(join(root, rest)) && statSync(join(root, rest)).isFile();
  if (path.startsWith(mounts.adminAssets)) return file(join(ADMIN_WEB_ROOT, 'assets'), path.slice(mounts.adminAssets.length));
  // '/' itself is the UI's index.html.
  return path === mounts.ui ? existsSync(join(WEB_ROOT, 'index.html')) : file(WEB_ROOT, path.slice(mounts.ui.length));
}

describe('route table: the server registers exactly the paths of @temp-inbox/api', () => {
  let server: TestServer;
  let paths: Map<string, string[]>;

  before(async () => {
    server = await startTestServer({ MAILTM_API: 'on', MCP: 'on', SANDBOXES: 'table-box:table-secret', ADMIN_TOKEN, METRICS_TOKEN: 'metrics-token-for-the-table' });
    paths = registered(server.http.printRoutes({ commonPrefix: false }));
  });
  after(async () => server?.close());

  it('reads the routes Fastify printed (the check below is not vacuous)', () => {
    assert.deepEqual(paths.get(routes.mail)?.sort(), ['GET', 'HEAD', 'PATCH']);
    assert.ok(paths.size >= Object.keys(routes).length, `only ${paths.size} routes read`);
  });

  it('every registered path is in the table (or is a file of the web build)', () => {
    const table = new Set<string>(Object.values(routes));
    const strays = [...paths.keys()].filter((p) => !table.has(p) && !isBuiltFile(p));
    assert.deepEqual(strays, []);
  });

  it('every path of the table is registered', () => {
    const missing = Object.entries(routes).filter(([name, p]) => !paths.has(p) && !(name.startsWith('adminPage') && !existsSync(join(ADMIN_WEB_ROOT, 'admin.html'))));
    assert.deepEqual(missing, []);
  });

  it('no two names of the table spell one path', () => {
    const values = Object.values(routes);
    assert.equal(new Set(values).size, values.length);
  });
});

describe('route table: path() and within()', () => {
  it('path() puts each parameter in, URI-encoded, and leaves a path without any as it is', () => {
    assert.equal(path(routes.mails), '/api/mails');
    assert.equal(path(routes.attachment, { uuid: 'a/b c', attachmentId: 3 }), '/api/attachment/a%2Fb%20c/3');
    assert.equal(path(routes.adminAddressMail, { id: 7, uuid: '?#%' }), '/api/admin/addresses/7/mails/%3F%23%25');
  });

  it('path() refuses a missing parameter', () => {
    assert.throws(() => path(routes.mail, {} as { uuid: string }), /needs the parameter "uuid"/);
  });

  it('within() gives the route as its mounted plugin registers it, and refuses a route of another mount', () => {
    assert.equal(within(mounts.mailtm, routes.mailtmDomains), '/domains');
    assert.equal(within(mounts.mailpit, routes.mailpitViewDoubleSlash), '//view/:file');
    assert.throws(() => within(mounts.mailhog, routes.mailpitInfo), /is not under \/mailhog\/api/);
  });
});
